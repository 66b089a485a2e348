package ttl_test

import (
	"context"

	"cloud.google.com/go/bigtable"
)

// tablets is a table whose SampleRowKeys reports fixed tablet boundaries,
// for tests that count shards: bttest samples row keys at random. nil
// keys make the whole table one shard.
type tablets struct {
	bigtable.TableAPI
	keys []string
}

func (t tablets) SampleRowKeys(context.Context) ([]string, error) { return t.keys, nil }
