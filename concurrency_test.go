package ttl_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
)

// One Table used by many goroutines at once; run with -race.

// TestConcurrentUse runs writers and readers on one Table at once; run it
// with -race.
func TestConcurrentUse(t *testing.T) {
	ctx := context.Background()
	clock := newClock(base)
	tbl, _ := newTable(t, clock, map[string]ttl.Strategy{"f": ttl.OneSecond(), "v": ttl.SequenceNumbers(2)}, nil)
	// bttest races when a write adds a column to a row that a read is
	// streaming (it sorts the row's column names in place), so every
	// column exists before the goroutines start.
	for i := 0; i < 5; i++ {
		m := ttl.NewMutation()
		for g := 0; g < 8; g++ {
			m.Set("f", fmt.Sprint(g), []byte("x"), ttl.For(time.Hour))
		}
		m.Set("v", "c", []byte("x"), ttl.Version(0))
		require.NoError(t, tbl.Apply(ctx, fmt.Sprintf("r%d", i), m))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				row := fmt.Sprintf("r%d", i%5)
				m := ttl.NewMutation()
				m.Set("f", fmt.Sprint(g), []byte("x"), ttl.For(time.Duration(i+1)*time.Minute))
				m.Set("v", "c", []byte("x"), ttl.Version(int64(i)))
				if err := tbl.Apply(ctx, row, m); err != nil {
					errs <- err
					return
				}
				if _, err := tbl.ReadRow(ctx, row); err != nil {
					errs <- err
					return
				}
				clock.Advance(time.Millisecond)
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
	rows := 0
	require.NoError(t, tbl.ReadRows(ctx, bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		rows++
		assert.Len(t, r["v"], 2, "row %s keeps two versions", r.Key())
		assert.Len(t, r["f"], 8*4+8, "row %s has every writer's four cells and the first ones", r.Key())
		return true
	}))
	assert.Equal(t, 5, rows)
}
