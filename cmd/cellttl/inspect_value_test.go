package main

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/cellttl/ttl"
)

// TestCellValue prints a counter family's 8-byte cells as sums, by the
// family's value type, and every other value quoted.
func TestCellValue(t *testing.T) {
	c := &config{}
	c.families.Strategies = map[string]ttl.Strategy{
		"hits": ttl.Grace(ttl.Counter(ttl.OneSecond()), time.Hour),
		"sess": ttl.OneSecond(),
	}
	eight := binary.BigEndian.AppendUint64(nil, 42)
	assert.Equal(t, "sum 42", cellValue(c, "hits", eight))
	assert.Equal(t, `"\x00\x00\x00\x00\x00\x00\x00*"`, cellValue(c, "sess", eight))
	assert.Equal(t, `"\x00\x00\x00\x00\x00\x00\x00*"`, cellValue(c, "other", eight))
	assert.Equal(t, "abc", cellValue(c, "hits", []byte("abc")))
}
