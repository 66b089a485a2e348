package schedule_test

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/schedule"
)

var t0 = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

func TestKeyParse(t *testing.T) {
	for _, row := range []string{"", "a", "user#42", "\x00\xff", strings.Repeat("z", 300)} {
		for _, exp := range []time.Time{t0, t0.Add(999 * time.Millisecond), time.Unix(0, 0), time.Unix(-5, 0)} {
			k := schedule.Key(row, exp)
			e, err := schedule.Parse(k)
			if err != nil {
				t.Fatalf("Parse(Key(%q, %v)) = %v", row, exp, err)
			}
			if e.Row != row || e.Salt != schedule.Salt(row) || e.Slot.Unix() != schedule.SlotOf(exp) {
				t.Errorf("Parse(Key(%q, %v)) = %+v", row, exp, e)
			}
			if e.String() != k {
				t.Errorf("Entry.String() = %q, want %q", e.String(), k)
			}
		}
	}
}

func TestParseRefuses(t *testing.T) {
	good := schedule.Key("r", t0)
	for _, k := range []string{"", "zz#0000000000000#r", good[:2] + "x" + good[3:], good[:16] + "x" + good[17:],
		"40" + good[2:], good[:3] + "-000000000001" + good[16:], otherSalt(good)} {
		if _, err := schedule.Parse(k); !errors.Is(err, schedule.ErrKey) {
			t.Errorf("Parse(%q) = %v, want ErrKey", k, err)
		}
	}
}

// otherSalt returns k with a valid salt that is not its row's.
func otherSalt(k string) string {
	s := (schedule.Salt(k[17:]) + 1) % schedule.Salts
	return fmt.Sprintf("%02x", s) + k[2:]
}

// Within a salt, keys sort by slot, then row: a range of slots is a range
// of keys.
func TestKeysSortBySlot(t *testing.T) {
	var keys []string
	var rows []string
	for i := range 200 {
		rows = append(rows, fmt.Sprintf("row%03d", i))
	}
	for i, r := range rows {
		keys = append(keys, schedule.Key(r, t0.Add(time.Duration(i%7)*time.Hour*24*400)))
	}
	sort.Strings(keys)
	last := map[int]time.Time{}
	for _, k := range keys {
		e, _ := schedule.Parse(k)
		if e.Slot.Before(last[e.Salt]) {
			t.Fatalf("salt %d: slot %v after %v", e.Salt, e.Slot, last[e.Salt])
		}
		last[e.Salt] = e.Slot
	}
}

// The issue's spread rule: consecutive rows with one lifetime put no more
// than 2/Salts of their entries under one prefix.
func TestSpread(t *testing.T) {
	for _, pattern := range []string{"user%07d", "%d", "2026-11-27T12:00:%06d", "sess-%x"} {
		n := 100_000
		count := map[int]int{}
		for i := range n {
			e, _ := schedule.Parse(schedule.Key(fmt.Sprintf(pattern, i), t0))
			count[e.Salt]++
		}
		if len(count) != schedule.Salts {
			t.Errorf("%s: %d salts used, want %d", pattern, len(count), schedule.Salts)
		}
		for s, c := range count {
			if c > 2*n/schedule.Salts {
				t.Errorf("%s: salt %02x holds %d of %d entries, more than 2/%d", pattern, s, c, n, schedule.Salts)
			}
		}
	}
}

func TestRangeHoldsItsSlots(t *testing.T) {
	from, until := t0.Add(500*time.Millisecond), t0.Add(3*time.Second+500*time.Millisecond)
	for _, c := range []struct {
		exp  time.Time
		want bool
	}{
		{t0.Add(-time.Millisecond), false},
		{t0, true}, // the slot of from: read, its cells judged by the filter
		{t0.Add(time.Second), true},
		{t0.Add(3*time.Second + 999*time.Millisecond), true},
		{t0.Add(4 * time.Second), false},
	} {
		for _, row := range []string{"a", "b", "c#1"} {
			k := schedule.Key(row, c.exp)
			rg := schedule.Range(schedule.Salt(row), from, until)
			if got := rg.Contains(k); got != c.want {
				t.Errorf("Range(%v, %v).Contains(Key(%q, %v)) = %v, want %v", from, until, row, c.exp, got, c.want)
			}
			other := schedule.Range((schedule.Salt(row)+1)%schedule.Salts, from, until)
			if other.Contains(k) {
				t.Errorf("another salt's range holds %q", k)
			}
			if got := schedule.Ranges(from, until); len(got) != schedule.Salts {
				t.Errorf("Ranges: %d ranges, want %d", len(got), schedule.Salts)
			}
		}
	}
}

func TestTimestamp(t *testing.T) {
	for _, exp := range []time.Time{t0, t0.Add(999 * time.Millisecond), time.Unix(0, 0)} {
		ts := schedule.Timestamp(exp)
		if ts.Time().Before(exp) || ts.Time().Sub(exp) > time.Second || ts%1000 != 0 {
			t.Errorf("Timestamp(%v) = %v: want the end of its second", exp, ts.Time())
		}
	}
	if ts := schedule.Timestamp(time.Unix(1<<62, 0)); ts <= 0 || ts%1000 != 0 {
		t.Errorf("Timestamp(far future) = %d, want the largest valid timestamp", ts)
	}
	if got := schedule.Policy(time.Hour).String(); got != bigtable.MaxAgePolicy(time.Hour).String() {
		t.Errorf("Policy(1h) = %s", got)
	}
	if got := schedule.Policy(0).String(); got != bigtable.MaxAgePolicy(time.Second).String() {
		t.Errorf("Policy(0) = %s", got)
	}
}

func TestBatchWrite(t *testing.T) {
	ctx := context.Background()
	e := emulator.StartForTest(t)
	tbl, err := e.CreateTable(ctx, "sched", map[string]bigtable.GCPolicy{schedule.Family: schedule.Policy(0)})
	if err != nil {
		t.Fatal(err)
	}
	var b schedule.Batch
	if err := b.Write(ctx, tbl); err != nil {
		t.Fatalf("empty batch: %v", err)
	}
	b.Add("r1", t0)
	b.Add("r1", t0.Add(10*time.Millisecond)) // the same slot
	if b.Len() != 1 {
		t.Fatalf("Len = %d, want 1", b.Len())
	}
	if err := b.Write(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	b.Add("r2", t0)
	b.Add("r3", t0)
	b.Add("r2", t0)
	b.Add("r2", t0.Add(time.Second))
	if b.Len() != 3 {
		t.Fatalf("Len = %d, want 3", b.Len())
	}
	if err := b.Write(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	var got []string
	err = tbl.ReadRows(ctx, schedule.Ranges(t0, t0.Add(time.Second)), func(r bigtable.Row) bool {
		got = append(got, r.Key())
		if ts := r[schedule.Family][0].Timestamp; ts != schedule.Timestamp(t0) && ts != schedule.Timestamp(t0.Add(time.Second)) {
			t.Errorf("%s: timestamp %v", r.Key(), ts.Time())
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{schedule.Key("r1", t0), schedule.Key("r2", t0), schedule.Key("r3", t0), schedule.Key("r2", t0.Add(time.Second))}
	sort.Strings(want)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("entries = %q, want %q", got, want)
	}
}

func TestBatchWriteFails(t *testing.T) {
	ctx := context.Background()
	e := emulator.StartForTest(t)
	tbl := e.Client.Open("missing")
	var b schedule.Batch
	b.Add("r1", t0)
	if err := b.Write(ctx, tbl); err == nil || !strings.Contains(err.Error(), schedule.Key("r1", t0)) {
		t.Errorf("one entry to a missing table: %v", err)
	}
	b.Add("r2", t0)
	if err := b.Write(ctx, tbl); err == nil {
		t.Errorf("two entries to a missing table: no error")
	}
}

// Salt is FNV-1a, as hash/fnv computes it: the layout says so.
func TestSaltIsFNV(t *testing.T) {
	for _, row := range []string{"", "a", "user#42", "\x00\xff", strings.Repeat("z", 300)} {
		h := fnv.New32a()
		h.Write([]byte(row))
		if got, want := schedule.Salt(row), int(h.Sum32()%schedule.Salts); got != want {
			t.Errorf("Salt(%q) = %d, want %d", row, got, want)
		}
	}
}

// A batch longer than it scans finds its duplicates in a map, keeps the
// order added, and builds keys for entries added after Keys was called;
// Reset empties it for reuse.
func TestBatchManyEntries(t *testing.T) {
	var b schedule.Batch
	var want []string
	for round := range 2 {
		for i := range 40 {
			row := fmt.Sprintf("row%02d", i%20) // each row in two slots
			exp := t0.Add(time.Duration(i/20) * time.Second)
			b.Add(row, exp)
			b.Add(row, exp.Add(time.Millisecond)) // the same slot
			if i%20 == 3 {
				b.Add("row00", t0) // an entry added long before
			}
			if round == 0 {
				want = append(want, schedule.Key(row, exp))
			}
			if i == 10 {
				if got := b.Keys(); fmt.Sprint(got) != fmt.Sprint(want[:11]) {
					t.Fatalf("round %d: Keys part way = %q, want %q", round, got, want)
				}
			}
		}
		if b.Len() != 40 {
			t.Fatalf("round %d: Len = %d, want 40", round, b.Len())
		}
		if got := b.Keys(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("round %d: Keys = %q, want %q", round, got, want)
		}
		b.Reset()
		if b.Len() != 0 || len(b.Keys()) != 0 {
			t.Fatalf("round %d: Reset left %d entries", round, b.Len())
		}
	}
}

// Trim drops the entries added after a mark, from the keys and from what
// the batch has seen, short batch or long.
func TestBatchTrim(t *testing.T) {
	for _, n := range []int{3, 20} {
		var b schedule.Batch
		for i := range n {
			b.Add(fmt.Sprint("r", i), t0)
		}
		b.Keys()
		b.Add("x", t0)
		b.Add("y", t0)
		b.Trim(n)
		if b.Len() != n || len(b.Keys()) != n {
			t.Fatalf("%d: after Trim, Len = %d, %d keys; want %d", n, b.Len(), len(b.Keys()), n)
		}
		b.Trim(n + 5) // nothing to trim
		b.Add("x", t0)
		if b.Len() != n+1 || b.Keys()[n] != schedule.Key("x", t0) {
			t.Errorf("%d: an entry trimmed is not added again: %q", n, b.Keys())
		}
		b.Trim(-1)
		if b.Len() != 0 {
			t.Errorf("%d: Trim(-1) left %d", n, b.Len())
		}
	}
}

// Entries of several slots, in runs, are written each with its own slot's
// timestamp, and an entry the table refuses is named.
func TestBatchWriteSlots(t *testing.T) {
	ctx := context.Background()
	e := emulator.StartForTest(t)
	tbl, err := e.CreateTable(ctx, "sched", map[string]bigtable.GCPolicy{schedule.Family: schedule.Policy(0)})
	if err != nil {
		t.Fatal(err)
	}
	var b schedule.Batch
	want := map[string]bigtable.Timestamp{}
	for i := range 30 {
		exp := t0.Add(time.Duration(i/10) * time.Second)
		row := fmt.Sprint("r", i)
		b.Add(row, exp)
		want[schedule.Key(row, exp)] = schedule.Timestamp(exp)
	}
	if err := b.Write(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	got := map[string]bigtable.Timestamp{}
	err = tbl.ReadRows(ctx, bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		got[r.Key()] = r[schedule.Family][0].Timestamp
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("entries = %v, want %v", got, want)
	}
	// A table without the schedule's family refuses each entry.
	other, err := e.CreateTable(ctx, "other", map[string]bigtable.GCPolicy{"f": schedule.Policy(0)})
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	b.Add("first", t0)
	b.Add("second", t0)
	if err := b.Write(ctx, other); err == nil || !strings.Contains(err.Error(), schedule.Key("first", t0)) {
		t.Errorf("entries the table refuses: %v, want an error naming the first", err)
	}
}

func ExampleKey() {
	fmt.Println(schedule.Key("user#42", time.Date(2026, 11, 27, 12, 0, 0, 250e6, time.UTC)))
	// Output: 25#0001795780800#user#42
}
