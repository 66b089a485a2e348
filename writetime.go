package ttl

import (
	"encoding/binary"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/bigtable"
)

// writeTimeLabel prefixes the label that carries a returned cell's write
// time, in microseconds since the Unix epoch.
const writeTimeLabel = "cellttl-written:"

// WriteTime returns the real write time of item, a cell returned by a read
// with [WithWriteTimes] from a table with [RecordWriteTime], like
// Cassandra's WRITETIME(). ok is false for a cell without a recorded write
// time: one read without WithWriteTimes, from a family without a strategy,
// written by read-modify-write, or written before RecordWriteTime was on.
//
// The time travels as a label on the cell ("cellttl-written:" and the
// microseconds), beside any the RowFilter applied.
func WriteTime(item bigtable.ReadItem) (t time.Time, ok bool) {
	for _, l := range item.Labels {
		if rest, found := strings.CutPrefix(l, writeTimeLabel); found {
			us, err := strconv.ParseInt(rest, 10, 64)
			if err != nil {
				return time.Time{}, false
			}
			return time.UnixMicro(us), true
		}
	}
	return time.Time{}, false
}

// encodeWriteTime is a companion cell's value: now in microseconds since
// the Unix epoch, as an 8-byte big-endian integer (Bigtable's int64
// encoding, so that other readers can decode it).
func encodeWriteTime(now time.Time) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), uint64(now.UnixMicro()))
}

// attachWriteTimes removes the companion cells of the managed families from
// a row read with them, labels each data cell with its companion's write
// time, and returns nil for a row left with no data cell. Other families,
// which have no companions, are left as they are.
func attachWriteTimes(r bigtable.Row, managed map[string]strategy) bigtable.Row {
	type key struct {
		column string
		ts     bigtable.Timestamp
	}
	for family, items := range r {
		if _, ok := managed[family]; !ok {
			continue
		}
		var written map[key]int64
		data := items[:0:0]
		for _, it := range items {
			fam, qual := splitColumn(it.Column)
			if col, ok := strings.CutPrefix(qual, companionPrefix); ok {
				if len(it.Value) == 8 {
					if written == nil {
						written = make(map[key]int64)
					}
					written[key{fam + ":" + col, it.Timestamp}] = int64(binary.BigEndian.Uint64(it.Value))
				}
				continue
			}
			data = append(data, it)
		}
		for i, it := range data {
			if us, ok := written[key{it.Column, it.Timestamp}]; ok {
				data[i].Labels = append(it.Labels[:len(it.Labels):len(it.Labels)], writeTimeLabel+strconv.FormatInt(us, 10))
			}
		}
		if len(data) == 0 {
			delete(r, family)
		} else {
			r[family] = data
		}
	}
	if len(r) == 0 {
		return nil
	}
	return r
}
