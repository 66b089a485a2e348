package sweep

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cellttl/ttl/internal/text"
	"github.com/cellttl/ttl/scan"
)

// A Report is what one call of Sweeper.Once did: the round it swept, the
// events it delivered and what it read.
type Report struct {
	// Table is the table swept.
	Table string `json:"table"`
	// Granularity is what each event reports.
	Granularity Granularity `json:"-"`
	// From and Until are the round's window: the expiries after From, up
	// to Until. Once the round is complete the watermark is Until: the
	// next round starts there.
	From  time.Time `json:"from"`
	Until time.Time `json:"until"`
	// Resumed reports that the round was begun by an earlier call, which
	// stopped before it was complete: this call read only the shards that
	// call did not finish, from where it stopped.
	Resumed bool `json:"resumed"`
	// Events is the number of events delivered in the round, by this call
	// and those that began it. A call that stopped on an error may have
	// delivered one more batch, which the next call delivers again.
	Events int64 `json:"events"`
	// Expired counts the cells found expired in the window, in the rows
	// read; their bytes include values only when the sweep reads them.
	Expired scan.Count `json:"expired"`
	// Unscheduled is, for a reconcile round (Options.Reconcile), the
	// number of events it delivered: those with no entry in the schedule,
	// which a scheduled sweep does not report. Above zero, some writer
	// writes without entries (cbt, another language, an import).
	Unscheduled int64 `json:"unscheduled"`
	// Deleted is the number of rows in which a sweep that deletes
	// (Options.Delete) deleted expired cells.
	Deleted int64 `json:"deleted"`
	// Read is what the call read: its requests, rows and cells are this
	// call's; its Shards and ShardsRead the round's, so that Read.Complete
	// reports whether the round is.
	Read scan.Stats `json:"read"`
	// Missed lists the families in which GC may have deleted cells that
	// expired in the window before the sweep read them: the sweep fell
	// further behind than the family keeps expired cells. Give the family
	// a grace (ttl.Grace) at least as long as the sweep may fall behind.
	Missed []Missed `json:"missed"`
}

// A Missed is a span of expiries a sweep may not have seen in one family:
// GC may delete a cell of it the family's Keep after its expiry, and the
// sweep read the family later than that.
type Missed struct {
	// Family is the family.
	Family string `json:"family"`
	// From and Until bound the expiries: after From, up to Until.
	From  time.Time `json:"from"`
	Until time.Time `json:"until"`
	// Keep is how long after expiry the family's GC policy keeps a cell.
	Keep time.Duration `json:"keep"`
}

// MarshalJSON writes the span with Keep as a Go duration string
// ("keep":"1h0m0s"), as every duration in the module's JSON.
func (m Missed) MarshalJSON() ([]byte, error) {
	type plain Missed // without these methods
	return json.Marshal(struct {
		plain
		Keep text.Duration `json:"keep"`
	}{plain(m), text.Duration(m.Keep)})
}

// UnmarshalJSON reads what MarshalJSON writes (or Keep in nanoseconds).
func (m *Missed) UnmarshalJSON(b []byte) error {
	type plain Missed // without these methods
	var in struct {
		*plain
		Keep text.Duration `json:"keep"`
	}
	in.plain = (*plain)(m)
	if err := json.Unmarshal(b, &in); err != nil {
		return fmt.Errorf("sweep: a missed span: %w", err)
	}
	m.Keep = time.Duration(in.Keep)
	return nil
}

// Complete reports whether the round is complete and nothing in it was
// missed: every shard read, every event delivered, and every cell that
// expired in the window reported (none that GC may have deleted first).
func (r *Report) Complete() bool { return r.Read.Complete() && len(r.Missed) == 0 }

// MarshalJSON encodes the report for programs, with its granularity and
// its verdict, complete.
func (r *Report) MarshalJSON() ([]byte, error) {
	type plain Report // without this method
	return json.Marshal(struct {
		*plain
		Granularity string `json:"granularity"`
		Complete    bool   `json:"complete"`
	}{(*plain)(r), r.Granularity.String(), r.Complete()})
}

// String sums the report up on one line, such as
// `sweep of table "sessions", expiries after 2030-05-01T00:00:00.000Z up to 2030-05-01T00:01:00.000Z: complete; 3 row events, 5 cells expired, deleted in 3 rows`:
// the window, whether the round is complete, the events and what was
// deleted. The cellttl command prints the rest.
func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sweep of table %q, expiries after %s up to %s: ", r.Table, text.Time(r.From), text.Time(r.Until))
	switch {
	case !r.Read.Complete():
		fmt.Fprintf(&b, "stopped after %d of %d shards; run again to resume", r.Read.ShardsRead, r.Read.Shards)
	case len(r.Missed) > 0:
		families := make([]string, 0, len(r.Missed))
		for _, m := range r.Missed {
			if q := fmt.Sprintf("%q", m.Family); !slices.Contains(families, q) {
				families = append(families, q)
			}
		}
		word := "family"
		if len(families) > 1 {
			word = "families"
		}
		fmt.Fprintf(&b, "complete, but GC may have deleted some expired cells of %s %s first", word, strings.Join(families, ", "))
	default:
		b.WriteString("complete")
	}
	fmt.Fprintf(&b, "; %s, %s expired", text.Plural(int(r.Events), r.Granularity.String()+" event", r.Granularity.String()+" events"),
		text.Plural(int(r.Expired.Cells), "cell", "cells"))
	if r.Unscheduled > 0 {
		fmt.Fprintf(&b, ", %d with no entry in the schedule", r.Unscheduled)
	}
	if r.Deleted > 0 {
		fmt.Fprintf(&b, ", deleted in %s", text.Plural(int(r.Deleted), "row", "rows"))
	}
	return b.String()
}
