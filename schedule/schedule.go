// Package schedule lays out a schedule table: an index of the rows of a
// data table by the second in which their cells expire, so that a sweep
// reads what expires instead of the whole table.
//
// Bigtable has no index by timestamp: a sweep that filters a table by
// timestamp still makes the server read every row of it. A schedule is a
// second table that the writers fill beside the data (ttl.WithSchedule):
// for every row written with a cell that expires, and every second (slot)
// in which its cells expire, one entry. A sweep given the schedule
// (sweep.Options.Schedule) reads the entries of the seconds it covers and
// then only the rows they name.
//
// An entry's key is salt first, never time first, so that the entries of
// "now plus a lifetime" spread over Salts tablets instead of one:
//
//	<salt>#<slot>#<row>
//
// salt is two lowercase hex digits, a hash of the row key modulo Salts;
// slot is the second of the expiry, Unix seconds as 13 decimal digits;
// row is the data row's key as it is. The entry is one empty cell in
// column Family:Column whose timestamp is the end of its slot, so that a
// schedule family given the GC policy of ttl.OneSecond (with the sweep's
// grace, Policy) collects the entries it no longer needs.
//
// An entry says only that a row may hold a cell that expires in its slot:
// the cell may have been renewed, replaced or deleted since, or never
// written at all (a writer that failed after its entries). A sweep reads
// the row and judges it as it judges any row, so a stale entry costs a
// read and reports nothing.
package schedule

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/bigtable"
)

// Family is the column family of a schedule table: the only one it needs.
const Family = "e"

// Column is the column of an entry's cell.
const Column = "e"

// Salts is the number of prefixes entries are spread over: a write of
// consecutive rows with one lifetime puts no more than about 1/Salts of
// its entries under one prefix. It is part of the layout: a schedule
// written with one number of salts cannot be read with another.
const Salts = 64

// Slot is the span of time one entry covers: every cell of a row that
// expires within the same second shares one entry.
const Slot = time.Second

// maxSlot is the last second a cell can expire in: Bigtable's largest
// timestamp (math.MaxInt64 microseconds, to the millisecond), in seconds.
const maxSlot = math.MaxInt64 / int64(time.Second/time.Microsecond)

// ErrKey reports a key that is not a schedule entry's.
var ErrKey = errors.New("schedule: not an entry's key")

// Salt returns the salt of row: FNV-1a of its key, modulo Salts.
func Salt(row string) int {
	// FNV-1a (hash/fnv's New32a) written out, so that it costs no
	// allocation: a writer salts every entry it adds.
	h := uint32(2166136261)
	for i := 0; i < len(row); i++ {
		h ^= uint32(row[i])
		h *= 16777619
	}
	return int(h % Salts)
}

// SlotOf returns the slot (Unix second) of expiry, clamped to the seconds
// a Bigtable timestamp can hold: an expiry before 1970 is slot 0.
func SlotOf(expiry time.Time) int64 {
	s := expiry.Unix()
	switch {
	case s < 0:
		return 0
	case s > maxSlot:
		return maxSlot
	}
	return s
}

// Key returns the key of the entry for the cells of row that expire at
// expiry.
func Key(row string, expiry time.Time) string {
	return prefix(Salt(row), SlotOf(expiry)) + row
}

// prefix returns the start of the keys of salt's entries of slot.
func prefix(salt int, slot int64) string {
	return string(appendPrefix(make([]byte, 0, keyHead), salt, slot))
}

// keyHead is the length of a key's prefix: salt, slot and two '#'.
const keyHead = 2 + 1 + 13 + 1

// appendPrefix appends the prefix of salt's entries of slot to b.
func appendPrefix(b []byte, salt int, slot int64) []byte {
	b = append(b, hex[salt>>4], hex[salt&15], '#')
	var digits [20]byte
	n := strconv.AppendInt(digits[:0], slot, 10)
	for i := len(n); i < 13; i++ {
		b = append(b, '0')
	}
	b = append(b, n...)
	return append(b, '#')
}

const hex = "0123456789abcdef"

// An Entry is what a key says: a row that may hold a cell expiring in the
// second that starts at Slot.
type Entry struct {
	Salt int
	Slot time.Time
	Row  string
}

// String returns the entry's key.
func (e Entry) String() string { return prefix(e.Salt, e.Slot.Unix()) + e.Row }

// Parse returns the entry a key names, or an error wrapping ErrKey.
func Parse(key string) (Entry, error) {
	const head = keyHead
	if len(key) < head || key[2] != '#' || key[head-1] != '#' {
		return Entry{}, fmt.Errorf("%w: %q", ErrKey, key)
	}
	salt, err := strconv.ParseUint(key[:2], 16, 8)
	if err != nil || salt >= Salts || key[:2] != prefix(int(salt), 0)[:2] {
		return Entry{}, fmt.Errorf("%w: %q: salt %q", ErrKey, key, key[:2])
	}
	slot, err := strconv.ParseInt(key[3:head-1], 10, 64)
	if err != nil || slot < 0 || slot > maxSlot {
		return Entry{}, fmt.Errorf("%w: %q: slot %q", ErrKey, key, key[3:head-1])
	}
	if Salt(key[head:]) != int(salt) {
		return Entry{}, fmt.Errorf("%w: %q: salt %02x is not its row's (%02x)", ErrKey, key, salt, Salt(key[head:]))
	}
	return Entry{Salt: int(salt), Slot: time.Unix(slot, 0).UTC(), Row: key[head:]}, nil
}

// Timestamp returns the timestamp of the cell of the entry for expiry:
// the end of its slot, in microseconds, which no cell expiring in the
// slot outlives.
func Timestamp(expiry time.Time) bigtable.Timestamp { return slotTimestamp(SlotOf(expiry)) }

// slotTimestamp returns the timestamp of the entries of slot.
func slotTimestamp(slot int64) bigtable.Timestamp {
	end := slot + 1
	if end > maxSlot {
		return bigtable.Timestamp(math.MaxInt64 - math.MaxInt64%1000)
	}
	return bigtable.Timestamp(end * int64(time.Second/time.Microsecond))
}

// Mutation returns the mutation that writes the entry for expiry (at
// the row Key gives).
func Mutation(expiry time.Time) *bigtable.Mutation {
	m := bigtable.NewMutation()
	m.Set(Family, Column, Timestamp(expiry), nil)
	return m
}

// Range returns the keys of salt's entries for the cells that expire
// after from and up to until: the slots from from's to until's, both
// included.
func Range(salt int, from, until time.Time) bigtable.RowRange {
	return bigtable.NewRange(prefix(salt, SlotOf(from)), prefix(salt, SlotOf(until)+1))
}

// Ranges returns Range for every salt, in key order.
func Ranges(from, until time.Time) bigtable.RowRangeList {
	out := make(bigtable.RowRangeList, Salts)
	for s := range out {
		out[s] = Range(s, from, until)
	}
	return out
}

// Policy returns the GC policy of a schedule's family for a sweep whose
// families keep expired cells for grace: ttl.Grace(ttl.OneSecond(),
// grace)'s, MaxAge of grace or a second, the longer. An entry, stamped at
// the end of its slot, is then kept at least as long as the cells it
// names.
func Policy(grace time.Duration) bigtable.GCPolicy {
	return bigtable.MaxAgePolicy(max(time.Second, grace))
}

// A Batch collects the entries of one write call, each once, to write
// them in one request before the call's data. The zero value is an empty
// batch. A Batch is not safe for concurrent use.
//
// It is made to cost little beside the write it serves: Add builds no key
// (a batch holds rows and slots, and builds the keys of all its entries
// in one buffer when they are asked for), and Write sends the entries of
// a slot with one shared mutation, since they are the same cell. Reset
// keeps its memory for the next call.
type Batch struct {
	rows  []string
	slots []int64
	seen  map[entry]struct{} // once the batch is too long to scan
	keys  []string           // of the first len(keys) entries, built by Keys
	muts  []*bigtable.Mutation

	// The mutation of the last slot written, kept by Reset: the client
	// only reads a mutation, so the next call's entries of the same
	// second (most of them, at any rate of writes) reuse it.
	last     *bigtable.Mutation
	lastSlot int64
}

// entry is an entry as a Batch tells one from another.
type entry struct {
	row  string
	slot int64
}

// scanned is how many entries a Batch searches one by one for a
// duplicate before it keeps a map of them.
const scanned = 8

// Add adds the entry for the cells of row that expire at expiry, unless
// the batch holds it.
func (b *Batch) Add(row string, expiry time.Time) {
	slot := SlotOf(expiry)
	n := len(b.rows)
	if n > 0 && b.slots[n-1] == slot && b.rows[n-1] == row {
		return // the common case: a row's cells share an expiry
	}
	switch e := (entry{row, slot}); {
	case n <= scanned:
		for i := range b.rows {
			if b.slots[i] == slot && b.rows[i] == row {
				return
			}
		}
		if n == scanned {
			if b.seen == nil {
				b.seen = make(map[entry]struct{}, 2*scanned)
			}
			for i := range b.rows {
				b.seen[entry{b.rows[i], b.slots[i]}] = struct{}{}
			}
			b.seen[e] = struct{}{}
		}
	default:
		if _, ok := b.seen[e]; ok {
			return
		}
		b.seen[e] = struct{}{}
	}
	b.rows = append(b.rows, row)
	b.slots = append(b.slots, slot)
}

// Len returns the number of entries in the batch.
func (b *Batch) Len() int { return len(b.rows) }

// Keys returns the keys of the batch's entries, in the order added.
func (b *Batch) Keys() []string {
	n := len(b.keys)
	if n == len(b.rows) {
		return b.keys
	}
	size := 0
	for _, row := range b.rows[n:] {
		size += keyHead + len(row)
	}
	// One allocation for all the keys: a Builder's String does not copy.
	var buf strings.Builder
	buf.Grow(size)
	var head [keyHead]byte
	for i, row := range b.rows[n:] {
		buf.Write(appendPrefix(head[:0], Salt(row), b.slots[n+i]))
		buf.WriteString(row)
	}
	all := buf.String()
	for _, row := range b.rows[n:] {
		k := keyHead + len(row)
		b.keys = append(b.keys, all[:k])
		all = all[k:]
	}
	return b.keys
}

// Trim removes the entries added since the batch held n: those of a row
// that was then refused, so that a row not written gets no entry. A batch
// with n entries or fewer is left as it is.
func (b *Batch) Trim(n int) {
	if n < 0 {
		n = 0
	}
	if n >= len(b.rows) {
		return
	}
	if b.seen != nil {
		for i := n; i < len(b.rows); i++ {
			delete(b.seen, entry{b.rows[i], b.slots[i]})
		}
	}
	clear(b.rows[n:])
	b.rows, b.slots = b.rows[:n], b.slots[:n]
	if len(b.keys) > n {
		clear(b.keys[n:])
		b.keys = b.keys[:n]
	}
}

// Reset empties the batch, keeping its memory.
func (b *Batch) Reset() {
	clear(b.rows) // let the rows' keys go
	clear(b.keys)
	clear(b.muts)
	b.rows, b.slots, b.keys, b.muts = b.rows[:0], b.slots[:0], b.keys[:0], b.muts[:0]
	clear(b.seen)
}

// Write writes the batch's entries to tbl, the schedule table, in one
// request (none for an empty batch), and returns nil only when every
// entry was written: an error names the first entry that failed.
func (b *Batch) Write(ctx context.Context, tbl bigtable.TableAPI) error {
	switch len(b.rows) {
	case 0:
		return nil
	case 1:
		key := b.Keys()[0]
		if err := tbl.Apply(ctx, key, b.slotMutation(b.slots[0])); err != nil {
			return fmt.Errorf("schedule: writing entry %q: %w", key, err)
		}
		return nil
	}
	keys := b.Keys()
	b.muts = b.muts[:0]
	for i, slot := range b.slots {
		// The entries of a slot are one cell, the same mutation: made
		// once per run of them (and the client only reads it).
		if i == 0 || slot != b.slots[i-1] {
			b.muts = append(b.muts, b.slotMutation(slot))
		} else {
			b.muts = append(b.muts, b.muts[i-1])
		}
	}
	errs, err := tbl.ApplyBulk(ctx, keys, b.muts)
	if err != nil {
		return fmt.Errorf("schedule: writing %d entries: %w", len(keys), err)
	}
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("schedule: writing entry %q: %w", keys[i], err)
		}
	}
	return nil
}

// slotMutation returns the mutation that writes an entry of slot: the
// last one made, when it is slot's.
func (b *Batch) slotMutation(slot int64) *bigtable.Mutation {
	if b.last == nil || b.lastSlot != slot {
		b.last, b.lastSlot = bigtable.NewMutation(), slot
		b.last.Set(Family, Column, slotTimestamp(slot), nil)
	}
	return b.last
}
