package model_test

import (
	"github.com/cellttl/ttl"
)

// maxSeq is the largest sequence number.
const maxSeq = int64(ttl.MaxTimestamp / 1000)
