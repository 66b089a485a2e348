package model_test

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/cellttl/ttl"
)

// DESIGN.md's sliding expiration ("Sliding expiration: Touch and
// KeepAlive") as the reference model applies it: what a Touch writes or
// refuses, which cells a KeepAlive read renews and to when, and, for a
// write injected between two of the requests either makes, what wins.
// The model also counts the requests each sends, as DESIGN.md and
// docs/sliding-expiration.md give them: Touch one read and one conditional write; a KeepAlive
// read its plain read, then for each row and family with a due cell a read
// of their write times (RecordWriteTime without WithWriteTimes), and for
// each due cell a read of its value if the read stripped it and a
// conditional write, in the order rows are read, families by name and
// columns as read.

// touchSpec is a Touch: the column and the lifetime it gets.
type touchSpec struct {
	row, fam, col string
	life          lifeSpec
}

// injectSpec is a write of another process that lands between the
// requests of a Touch or a KeepAlive read: before its request number at,
// counting from 0, to the row that request is for; or, when the op sends
// no request numbered at, after it, to row. at is at least 1: request 0
// is the op's read, and a write before it is an ordinary Apply.
type injectSpec struct {
	at  int
	row string
	mut *mutSpec
}

func (i *injectSpec) String() string {
	return fmt.Sprintf("another process's Apply(%v) before request %d (else after, to %q)", i.mut, i.at, i.row)
}

// slide is one Touch or KeepAlive read as the model runs it: its clock
// reading, the requests sent so far, and the injected write.
type slide struct {
	now      time.Time
	requests int
	inject   *injectSpec // nil: none
	injected bool
	// What the injected write did: its error, the row it went to, and
	// the cells it wrote that were their column's newest live cell just
	// after it (the newer state no renewal may overwrite).
	injectErr error
	injectRow string
	winners   []flatCell
	renewed   int  // cells renewed (a Touch: 1 if it wrote)
	lost      int  // renewals a writer beat (a Touch: 1 for ErrConflict)
	failed    bool // a renewal refused: the read's error wraps ErrRenewal
}

// request counts a request to row, the injected write landing first if
// this is the request it comes before.
func (m *model) request(s *slide, row string) {
	if s.inject != nil && !s.injected && s.requests == s.inject.at {
		m.injectNow(s, row)
	}
	s.requests++
}

// finish lands the injected write after the op if no request came after
// its point.
func (m *model) finish(s *slide) {
	if s.inject != nil && !s.injected {
		m.injectNow(s, s.inject.row)
	}
}

// injectNow applies the injected write to row and records the cells it
// made the newest live ones of their columns.
func (m *model) injectNow(s *slide, row string) {
	s.injected, s.injectRow = true, row
	changes, err := m.build(s.inject.mut, s.now)
	if s.injectErr = err; err != nil {
		return
	}
	m.write(row, changes, s.now)
	for _, c := range changes {
		if c.kind != mkSet && c.kind != mkReplace {
			continue
		}
		if cell, ok := m.newestLive(row, c.fam, c.col, s.now); ok && cell.ts == c.ts && cell.value == c.value {
			s.winners = append(s.winners, flatCell{c.fam, c.col, c.ts, c.value, cell.wt})
		}
	}
}

// newestLive returns the newest cell of family:col in row that a read at
// now (looking the read margin ahead) returns.
func (m *model) newestLive(row, family, col string, now time.Time) (storedCell, bool) {
	cells := m.rows[row][family][col]
	for i := range cells {
		if m.live(family, cells, i, now.Add(m.v.margin)) {
			return cells[i], true
		}
	}
	return storedCell{}, false
}

// rewriteIf is the conditional write of Touch and of a renewal: if the
// newest live cell of family:col is still stamped ts with value, the
// column becomes that value stamped newTS, with the write time wt kept.
func (m *model) rewriteIf(row, family, col string, ts int64, value string, newTS int64, now time.Time) bool {
	cell, ok := m.newestLive(row, family, col, now)
	if !ok || cell.ts != ts || cell.value != value {
		return false
	}
	m.rows[row][family][col] = []storedCell{{ts: newTS, value: value, wt: cell.wt}}
	return true
}

// expires tells whether family's cells expire by time: the families
// Touch and KeepAlive act on.
func (m *model) expires(family string) bool {
	r := m.v.families[family]
	return r == ruleOneSecond || r == ruleDefault
}

// touch is DESIGN.md's Touch at s.now: whether it wrote, or the error.
func (m *model) touch(t touchSpec, s *slide) (bool, error) {
	if !m.expires(t.fam) {
		return false, ttl.ErrLifetime
	}
	ts, err := m.timestamp(t.fam, t.life, s.now)
	if err != nil {
		return false, err
	}
	m.request(s, t.row) // the read of the newest live cell
	cell, ok := m.newestLive(t.row, t.fam, t.col, s.now)
	if !ok {
		return false, nil // never creates, never brings back
	}
	m.request(s, t.row) // the conditional write
	if !m.rewriteIf(t.row, t.fam, t.col, cell.ts, cell.value, ts, s.now) {
		s.lost++
		return false, ttl.ErrConflict
	}
	s.renewed++
	return true, nil
}

// ceilMs is t rounded up to a whole millisecond: a renewal's expiry, so
// that it is never before the instant KeepAlive promises.
func ceilMs(t time.Time) time.Time {
	if ms := time.UnixMilli(floorMs(t)); ms.Before(t) {
		return ms.Add(time.Millisecond)
	}
	return t
}

// slack is how much longer than idle a renewal gives.
func slack(idle time.Duration) time.Duration { return min(idle/4, 24*time.Hour) }

// keepAlive renews, as a read with KeepAlive(idle) at s.now does, the due
// cells of a row the read returned as cells (sorted with the families in
// order; write times attached if the read asked for them), and returns
// the cells as the read hands them over: those renewed with their new
// timestamps.
func (m *model) keepAlive(row string, cells []flatCell, idle time.Duration, writeTimes bool, s *slide) []flatCell {
	out := slices.Clone(cells)
	due := s.now.Add(m.v.margin + idle)
	until := lifeSpec{kind: lkUntil, t: ceilMs(due.Add(slack(idle)))}
	var families []string
	for _, c := range out {
		if !slices.Contains(families, c.Fam) {
			families = append(families, c.Fam)
		}
	}
	sort.Strings(families)
	for _, f := range families {
		if !m.expires(f) {
			continue
		}
		var dueCells []int
		var stamps []int64
		for i, c := range out {
			if c.Fam != f || i > 0 && out[i-1].Fam == f && out[i-1].Col == c.Col {
				continue // another family, or not its column's newest returned cell
			}
			if e, ok := timeExpiry(m.v.families[f].offset(), c.TS); !ok || !e.Before(due) {
				continue
			}
			ts, err := m.timestamp(f, until, s.now)
			if err != nil {
				s.failed = true
				continue
			}
			dueCells, stamps = append(dueCells, i), append(stamps, ts)
		}
		if len(dueCells) == 0 {
			continue
		}
		if m.v.writeTimes && !writeTimes {
			m.request(s, row) // the due cells' write times
		}
		for k, i := range dueCells {
			c := out[i]
			value := c.Value
			if value == "" { // stripped by the caller's filter: read it
				m.request(s, row)
				stored, ok := m.newestLive(row, f, c.Col, s.now)
				if !ok || stored.ts != c.TS {
					s.lost++
					continue
				}
				value = stored.value
			}
			m.request(s, row) // the conditional write
			if m.rewriteIf(row, f, c.Col, c.TS, value, stamps[k], s.now) {
				out[i].TS = stamps[k]
				s.renewed++
			} else {
				s.lost++
			}
		}
	}
	return out
}

// clone returns a deep copy of the model, to try one of a read's possible
// outcomes.
func (m *model) clone() *model {
	c := &model{v: m.v, now: m.now, rows: map[string]map[string]map[string][]storedCell{}}
	for row, fams := range m.rows {
		c.rows[row] = map[string]map[string][]storedCell{}
		for f, cols := range fams {
			c.rows[row][f] = map[string][]storedCell{}
			for col, cells := range cols {
				c.rows[row][f][col] = slices.Clone(cells)
			}
		}
	}
	return c
}
