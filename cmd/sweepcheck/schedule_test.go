package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/schedule"
)

// scheduleTable creates the schedule table "sched" on the emulator of
// BIGTABLE_EMULATOR_HOST (set by sessionsTable).
func scheduleTable(t *testing.T) *bigtable.Table {
	t.Helper()
	ctx := context.Background()
	admin, err := bigtable.NewAdminClient(ctx, "p", "i")
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if err := admin.CreateTableFromConf(ctx, &bigtable.TableConf{TableID: "sched", Families: map[string]bigtable.GCPolicy{schedule.Family: schedule.Policy(time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	c, err := bigtable.NewClient(ctx, "p", "i")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c.Open("sched")
}

// TestLoadWithSchedule: load -schedule writes each session's entries, and
// entries finds every stored cell's entry, and fails once one is gone.
func TestLoadWithSchedule(t *testing.T) {
	sessionsTable(t)
	sched := scheduleTable(t)
	ctx := context.Background()
	ledger := filepath.Join(t.TempDir(), "ledger.json")
	var out, errs bytes.Buffer
	if code := run(ctx, []string{"load", "-sessions", "5", "-span", "0s", "-min-life", "30s", "-max-life", "30s", "-renew", "0",
		"-ledger", ledger, "-schedule", "sched"}, nil, &out, &errs); code != 0 {
		t.Fatalf("load: %d %s", code, errs.String())
	}
	out.Reset()
	if code := run(ctx, []string{"entries", "-schedule", "sched"}, nil, &out, &errs); code != 0 || !strings.Contains(out.String(), "5 cells stored in sessions:sess, 5 entries in sched; 0 cells without") {
		t.Fatalf("entries: %d %q %s", code, out.String(), errs.String())
	}
	var keys []string
	sched.ReadRows(ctx, bigtable.InfiniteRange(""), func(r bigtable.Row) bool { keys = append(keys, r.Key()); return true })
	m := bigtable.NewMutation()
	m.DeleteRow()
	if err := sched.Apply(ctx, keys[0], m); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errs.Reset()
	if code := run(ctx, []string{"entries", "-schedule", "sched"}, nil, &out, &errs); code != 1 || !strings.Contains(out.String(), "1 cells without their entry") || !strings.Contains(errs.String(), keys[0]) {
		t.Errorf("entries with one gone: %d %q %q", code, out.String(), errs.String())
	}
	errs.Reset()
	if code := run(ctx, []string{"entries"}, nil, &out, &errs); code != 1 || !strings.Contains(errs.String(), "-schedule") {
		t.Errorf("entries without -schedule: %d %q", code, errs.String())
	}
	if code := run(ctx, []string{"load", "-schedule", "sched", "-family", "sess", "-grace", "-1s"}, nil, &out, &errs); code != 1 {
		t.Errorf("load with a bad grace: %d", code)
	}
}

// failEvery fails every n-th Apply, without applying it.
type failEvery struct {
	bigtable.TableAPI
	n, calls atomic.Int64
}

func (f *failEvery) Apply(ctx context.Context, row string, m *bigtable.Mutation, opts ...bigtable.ApplyOption) error {
	if f.calls.Add(1)%f.n.Load() == 0 {
		return errors.New("unavailable: the table is out of reach")
	}
	return f.TableAPI.Apply(ctx, row, m, opts...)
}

// TestLoadTolerates: with tolerate, failed writes are counted, not fatal,
// and the ledger is what the table holds: each stored session's newest
// cell, none for a session never stored.
func TestLoadTolerates(t *testing.T) {
	raw := sessionsTable(t)
	now := func() time.Time { return testkit.Base }
	f := &failEvery{TableAPI: raw}
	f.n.Store(3)
	tbl, err := ttl.NewTable(f, map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), time.Hour)}, ttl.WithClock(now))
	if err != nil {
		t.Fatal(err)
	}
	l := &load{tbl: tbl, raw: raw, family: "sess", sessions: 30, span: time.Minute, life: [2]time.Duration{10 * time.Second, 40 * time.Second},
		renew: 0.5, seed: 7, tolerate: true, timeout: time.Minute, now: now, sleep: func(context.Context, time.Duration) error { return nil }}
	sessions, err := l.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if l.failed == 0 || len(sessions) == 30 || len(sessions) == 0 {
		t.Fatalf("%d failed, %d sessions in the ledger: want some of each", l.failed, len(sessions))
	}
	var stored int
	raw.ReadRows(context.Background(), bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		stored++
		newest := r["sess"][0].Timestamp
		for _, it := range r["sess"] {
			newest = max(newest, it.Timestamp)
		}
		if !sessions[r.Key()].Equal(newest.Time()) {
			t.Errorf("%s: the ledger says %v, the table holds %v", r.Key(), sessions[r.Key()], newest.Time())
		}
		return true
	})
	if stored != len(sessions) {
		t.Errorf("%d rows stored, %d in the ledger", stored, len(sessions))
	}
}
