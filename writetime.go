package ttl

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/internal/rules"
)

// Write-time companions: everything about them is in this file.
//
// Under RecordWriteTime every data cell a Table writes in a managed family
// has a companion cell in the same family, in the same atomic mutation,
// with the same timestamp (so that it expires and is collected with its
// data cell), under the data cell's qualifier prefixed with
// WriteTimePrefix, holding the write time. Every qualifier from
// reservedFrom on (those starting with "\xff\xff") is reserved, so that
// one column range selects the data cells and another the companions,
// with no regular expression.

// WriteTimePrefix begins the qualifier of every write-time companion cell
// (see [RecordWriteTime]): the companion of column "c" is
// WriteTimePrefix + "c". It is part of the wire format; other readers of a
// family with companions skip the qualifiers that start with it. Its value
// is written out, so that documentation shows it: reservedFrom + "wt:".
const WriteTimePrefix = "\xff\xffwt:"

const (
	// reservedFrom starts the qualifiers kept for companions.
	reservedFrom = "\xff\xff"
	// companionEnd ends the companions' qualifier range: ':' + 1.
	companionEnd = reservedFrom + "wt;"
)

// writeTimeLabel prefixes the label that carries a returned cell's write
// time, in microseconds since the Unix epoch.
const writeTimeLabel = "cellttl-written:"

// RecordWriteTime makes the table keep each managed cell's real write time
// beside it, as Cassandra's WRITETIME() does: under the time strategies a
// cell's timestamp encodes its expiry, not when it was written.
//
// Every Set or Replace in a managed family also writes a companion cell in
// the same family and the same atomic mutation, with the same timestamp,
// so that it expires and is collected with its data cell. Its qualifier is
// [WriteTimePrefix] ("\xff\xffwt:") followed by the data cell's qualifier,
// and its value the table clock's now in microseconds since the Unix
// epoch, as an 8-byte big-endian integer. Deletes and Replace remove
// companions with their cells. Reads never return companions as data;
// pass [WithWriteTimes] to a read and call [WriteTime] on the cells it
// returns.
//
// Costs and rationale: docs/api-notes.md#ttlrecordwritetime.
func RecordWriteTime() Option {
	return optionFunc(func(c *config) error {
		c.writeTimes = true
		return nil
	})
}

// WithWriteTimes returns a read option that fetches, with each row, the
// write times that RecordWriteTime keeps, so that [WriteTime] can report
// them for the cells returned. The row's companion cells are read in the
// same request and removed from it; a row left with no data cell is not
// returned. A read with WithWriteTimes fails with ErrInvalidOption on a
// table without RecordWriteTime.
//
// Companions are fetched for every live cell of a row, whatever the
// RowFilter keeps of them, and they count for bigtable.LimitRows: a row
// whose live cells the RowFilter drops all is read, then not returned.
//
// Passed to a bigtable.Table directly, it makes the read fail with
// InvalidArgument and a message that names ttl.WithWriteTimes, as
// [KeepAlive] does.
func WithWriteTimes() ReadOption { return writeTimesOption{misuse("ttl.WithWriteTimes")} }

// writeTimesOption embeds a bigtable option to satisfy the sealed
// interface: one that fails a bigtable.Table's read (see misuse), which
// could not fetch write times; the Table recognises it by type and drops
// it.
type writeTimesOption struct{ bigtable.ReadOption }

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

// companions is whether a Table keeps write-time companions, and what it
// does with them when it does. Its methods do nothing when it is false.
type companions bool

// checkColumn reports a managed column in the companions' reserved range.
func (c companions) checkColumn(family, column string) error {
	if bool(c) && strings.HasPrefix(column, reservedFrom) {
		return fmt.Errorf("%w: qualifiers starting with \"\\xff\\xff\" hold write times (family %q, column %q)",
			ErrReservedColumn, family, column)
	}
	return nil
}

// set adds the companion of a data cell written at now with timestamp ts.
// Its value is now in microseconds since the Unix epoch, as an 8-byte
// big-endian integer (Bigtable's int64 encoding, so that other readers
// can decode it).
func (c companions) set(b *built, family, column string, ts bigtable.Timestamp, now time.Time) {
	if bool(c) {
		b.set(family, WriteTimePrefix+column, ts, encodeWriteTime(now))
	}
}

// encodeWriteTime is a companion's value: an instant in microseconds since
// the Unix epoch, as an 8-byte big-endian integer.
func encodeWriteTime(t time.Time) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), uint64(t.UnixMicro()))
}

// keep adds the companion of a data cell rewritten with timestamp ts,
// holding value, its original companion's (nil: it had none).
func (c companions) keep(b *built, family, column string, ts bigtable.Timestamp, value []byte) {
	if bool(c) && value != nil {
		b.set(family, WriteTimePrefix+column, ts, value)
	}
}

// column selects the companions of family:column.
func (companions) column(family, column string) bigtable.Filter {
	return exactColumn(family, WriteTimePrefix+column)
}

// find returns the value of data's companion among cells (read with
// column), or nil when it has none.
func (companions) find(family string, cells []bigtable.ReadItem, data bigtable.ReadItem) []byte {
	_, qualifier := rules.SplitColumn(data.Column)
	for _, c := range cells {
		if c.Column == family+":"+WriteTimePrefix+qualifier && c.Timestamp == data.Timestamp {
			return c.Value
		}
	}
	return nil
}

// labelled returns the companion value of a cell read with WithWriteTimes,
// from its label, or nil when it has none.
func (companions) labelled(item bigtable.ReadItem) []byte {
	if t, ok := WriteTime(item); ok {
		return encodeWriteTime(t)
	}
	return nil
}

// deleteColumn deletes the companions of a column whose cells are deleted.
func (c companions) deleteColumn(b *built, family, column string) {
	if bool(c) {
		b.deleteColumn(family, WriteTimePrefix+column)
	}
}

// deleteRange deletes the companions of a column's cells stamped
// [start, end), end 0 for no end.
func (c companions) deleteRange(b *built, family, column string, start, end bigtable.Timestamp) {
	if bool(c) {
		b.deleteRange(family, WriteTimePrefix+column, start, end)
	}
}

// dataColumns is the qualifier range [start, end) of a managed family's
// data cells, "" for an open bound: every qualifier, or with companions
// those below the reserved range.
func (c companions) dataColumns() (start, end string) {
	if bool(c) {
		return "", reservedFrom
	}
	return "", ""
}

// columns is the qualifier range [start, end) of the companions.
func (companions) columns() (start, end string) { return WriteTimePrefix, companionEnd }

// attach removes the companion cells of the managed families from a row
// read with them, labels each data cell with its companion's write time,
// and returns nil for a row left with no data cell. Other families, which
// have no companions, are left as they are.
func (companions) attach(r bigtable.Row, managed map[string]Strategy) bigtable.Row {
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
			fam, qual := rules.SplitColumn(it.Column)
			if col, ok := strings.CutPrefix(qual, WriteTimePrefix); ok {
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
