package main

import (
	"fmt"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
)

// family is the one column family every figure writes to.
const family = "f"

// The scenarios the figures draw; the tests replay them on the emulator.
var (
	// oneSecondWrite is one cell written at 10:00 with For(30m).
	oneSecondWrite = timedWrites{
		strategy: ttl.OneSecond(),
		written:  time.Date(2030, 4, 30, 10, 0, 0, 0, time.UTC),
		lives:    []ttl.Lifetime{ttl.For(30 * time.Minute)},
	}

	// defaultWrites are three cells written at the same moment with the
	// default, a shorter and a longer lifetime.
	defaultWrites = timedWrites{
		strategy: ttl.DefaultExpiration(48 * time.Hour),
		written:  time.Date(2030, 4, 30, 10, 0, 0, 0, time.UTC),
		lives:    []ttl.Lifetime{ttl.Default, ttl.For(time.Hour), ttl.For(72 * time.Hour)},
	}

	// seqnumStrategy keeps three versions; seqnumWritten are the moments,
	// in one week, at which versions 1, 2, ... of one column are written.
	seqnumStrategy = ttl.SequenceNumbers(3)
	seqnumWritten  = []time.Time{
		monday.Add(9 * time.Hour),
		monday.Add(17*time.Hour + 30*time.Minute),
		monday.Add(2*24*time.Hour + 12*time.Hour),
		monday.Add(3*24*time.Hour + 8*time.Hour),
		monday.Add(5*24*time.Hour + 20*time.Hour),
	}
	monday = time.Date(2030, 4, 29, 0, 0, 0, 0, time.UTC)
)

// timedWrites are cells written at one moment under a time strategy.
type timedWrites struct {
	strategy ttl.Strategy
	written  time.Time
	lives    []ttl.Lifetime
}

// cells works out the life of each cell.
func (w timedWrites) cells() ([]timedCell, error) {
	cells := make([]timedCell, len(w.lives))
	for i, life := range w.lives {
		c, err := timed(w.strategy, w.written, life)
		if err != nil {
			return nil, err
		}
		cells[i] = c
	}
	return cells, nil
}

// A timedCell is the life of one cell under a time strategy, every instant
// taken from the library: the timestamp from Strategy.Timestamp, the expiry
// from Strategy.ExpiresAt, and the moment GC may remove it from the family's
// GC policy.
type timedCell struct {
	life    ttl.Lifetime
	written time.Time // when the Table applied the write
	stamp   time.Time // the timestamp stored with the cell
	expiry  time.Time // reads return the cell before it, never from it on
	gcAfter time.Time // MaxAge(a) may remove the cell once now > stamp + a
}

// timed works out how a cell written at written with life lives under s, a
// time strategy. It refuses a result the library promises never to give: a
// cell that is not live when written, or one GC may remove before it has
// expired.
func timed(s ttl.Strategy, written time.Time, life ttl.Lifetime) (timedCell, error) {
	ts, err := s.Timestamp(written, life)
	if err != nil {
		return timedCell{}, err
	}
	expiry, ok := s.ExpiresAt(ts)
	if !ok {
		return timedCell{}, fmt.Errorf("%v: %v never expires", s, life)
	}
	maxAge, ok := s.GCPolicy().(bigtable.MaxAgeGCPolicy)
	if !ok {
		return timedCell{}, fmt.Errorf("%v: GC policy %v is not a maximum age", s, s.GCPolicy())
	}
	c := timedCell{
		life:    life,
		written: written,
		stamp:   ts.Time().UTC(),
		expiry:  expiry.UTC(),
		gcAfter: ts.Time().UTC().Add(time.Duration(maxAge)),
	}
	switch {
	case !c.expiry.After(written):
		return timedCell{}, fmt.Errorf("%v: %v written at %v is born expired at %v", s, life, written, c.expiry)
	case c.gcAfter.Before(c.expiry):
		return timedCell{}, fmt.Errorf("%v: %v: GC may remove the cell at %v, before it expires at %v", s, life, c.gcAfter, c.expiry)
	}
	return c, nil
}

// A version is one cell of a column under SequenceNumbers.
type version struct {
	seq      int64
	written  time.Time          // when it was written: it changes nothing
	stamp    bigtable.Timestamp // seq milliseconds after the Unix epoch
	returned bool               // among the newest the reads return
}

// versions works out how the cells Version(1) .. Version(len(written))
// of one column, written at the given instants, are stored and read under
// s. It reads the number of versions kept from s's GC policy; the reads
// return those same versions.
func versions(s ttl.Strategy, written []time.Time) (vs []version, keep int, err error) {
	maxVersions, ok := s.GCPolicy().(bigtable.MaxVersionsGCPolicy)
	if !ok {
		return nil, 0, fmt.Errorf("%v: GC policy %v is not a number of versions", s, s.GCPolicy())
	}
	keep = int(maxVersions)
	for i, at := range written {
		seq := int64(i + 1)
		ts, err := s.Timestamp(at, ttl.Version(seq))
		if err != nil {
			return nil, 0, err
		}
		vs = append(vs, version{seq: seq, written: at, stamp: ts})
	}
	// Reads return, like GC keeps, the newest cells by timestamp.
	for i := range vs {
		newer := 0
		for _, w := range vs {
			if w.stamp > vs[i].stamp {
				newer++
			}
		}
		vs[i].returned = newer < keep
	}
	return vs, keep, nil
}
