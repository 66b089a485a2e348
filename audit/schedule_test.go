package audit_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/audit"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/schedule"
)

// TestScheduleReport counts keys by hand: entries behind and ahead of now
// in their buckets, a foreign key, two reports merged, and the JSON of
// non-empty buckets unless AllBuckets.
func TestScheduleReport(t *testing.T) {
	a := audit.NewScheduleReport("s", "t", base, "maxage=1h")
	b := audit.NewScheduleReport("s", "t", base, "maxage=1h")
	a.AddKey(schedule.Key("r1", base.Add(-2*time.Hour)))
	a.AddKey(schedule.Key("r2", base.Add(10*time.Minute)))
	b.AddKey(schedule.Key("r3", base.Add(20*time.Minute)))
	b.AddKey("not-an-entry")
	a.Read = scan.Stats{Reads: 1, RowsReturned: 2, ShardsRead: 1}
	b.Read = scan.Stats{Reads: 2, RowsReturned: 2, ShardsRead: 1}
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	if got := a.Read; got.Reads != 3 || got.RowsReturned != 4 || got.ShardsRead != 2 {
		t.Errorf("read %+v, want 3 reads, 4 rows returned, 2 shards read", got)
	}
	if got := [4]int64{a.Entries, a.Behind, a.Ahead, a.Foreign}; got != [4]int64{3, 1, 2, 1} {
		t.Errorf("entries, behind, ahead, foreign = %v, want [3 1 2 1]", got)
	}
	due := map[time.Time]int64{}
	for _, bk := range a.Due {
		if bk.Entries > 0 {
			due[bk.From] = bk.Entries
		}
	}
	want := map[time.Time]int64{base.Add(-24 * time.Hour): 1, base: 2}
	if len(due) != len(want) || due[base.Add(-24*time.Hour)] != 1 || due[base] != 2 {
		t.Errorf("due = %v, want %v", due, want)
	}
	if got, want := a.String(), `schedule table "s" of table "t" at `+base.Format("2006-01-02T15:04:05.000Z")+": 3 entries, 1 behind, 2 ahead"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	var decoded struct{ Due []map[string]any }
	for _, tt := range []struct {
		all  bool
		want int
	}{{false, 2}, {true, len(a.Due)}} {
		a.AllBuckets = tt.all
		out, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		decoded.Due = nil
		if err := json.Unmarshal(out, &decoded); err != nil {
			t.Fatal(err)
		}
		if len(decoded.Due) != tt.want {
			t.Errorf("AllBuckets %v: %d buckets in JSON, want %d", tt.all, len(decoded.Due), tt.want)
		}
	}
	if _, open := decoded.Due[0]["from"]; open {
		t.Errorf("the first bucket's open end is encoded: %v", decoded.Due[0])
	}
	if err := a.Merge(audit.NewScheduleReport("other", "t", base, "")); err == nil {
		t.Error("a report of another schedule merged")
	}
}

// TestCountSchedule counts a schedule table on the emulator, whole and
// sampled, and checks CountSchedule's refusals.
func TestCountSchedule(t *testing.T) {
	ctx := context.Background()
	e := emulator.StartForTest(t)
	sched := e.TableForTest(t, "sched", map[string]bigtable.GCPolicy{schedule.Family: schedule.Policy(time.Hour)})
	for i, d := range []time.Duration{-time.Hour, time.Minute, 2 * time.Minute} {
		expiry := base.Add(d)
		if err := sched.Apply(ctx, schedule.Key(string(rune('a'+i)), expiry), schedule.Mutation(expiry)); err != nil {
			t.Fatal(err)
		}
	}
	now := func() time.Time { return base }
	r, err := audit.CountSchedule(ctx, e.Admin, sched, "sched", "t", audit.Options{AllBuckets: true, Scan: scan.Options{Now: now}})
	if err != nil {
		t.Fatal(err)
	}
	if got := [3]int64{r.Entries, r.Behind, r.Ahead}; got != [3]int64{3, 1, 2} || !r.Read.Complete() || !r.AllBuckets {
		t.Errorf("counts %v, read %+v, all buckets %v", got, r.Read, r.AllBuckets)
	}
	if r.Policy != "maxage=1h" {
		t.Errorf("policy %q, want maxage=1h", r.Policy)
	}
	r, err = audit.CountSchedule(ctx, e.Admin, sched, "sched", "t", audit.Options{Scan: scan.Options{Now: now, Sample: 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Read.Estimate() {
		t.Errorf("a sample's read %+v is no estimate", r.Read)
	}

	for _, tt := range []struct {
		admin *bigtable.AdminClient
		opts  audit.Options
		want  error
	}{
		{nil, audit.Options{}, ttl.ErrNilArgument},
		{e.Admin, audit.Options{Scan: scan.Options{Workers: -1}}, ttl.ErrInvalidOption},
	} {
		if _, err := audit.CountSchedule(ctx, tt.admin, sched, "sched", "t", tt.opts); !errors.Is(err, tt.want) {
			t.Errorf("CountSchedule(%v) = %v, want %v", tt.opts, err, tt.want)
		}
	}
	if _, err := audit.CountSchedule(ctx, e.Admin, sched, "missing", "t", audit.Options{}); err == nil {
		t.Error("a schedule table that does not exist was counted")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	r, err = audit.CountSchedule(cancelled, e.Admin, sched, "sched", "t", audit.Options{})
	if err == nil && r != nil && r.Read.Complete() {
		t.Error("a cancelled count read every shard")
	}
}
