package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/sweep"
)

// sessionsTable starts an emulator, points BIGTABLE_EMULATOR_HOST at it
// and creates the table "sessions" with family "sess" in project p,
// instance i, as the commands open it.
func sessionsTable(t *testing.T) *bigtable.Table {
	t.Helper()
	e := emulator.StartForTest(t)
	t.Setenv("BIGTABLE_EMULATOR_HOST", e.Addr)
	ctx := context.Background()
	admin, err := bigtable.NewAdminClient(ctx, "p", "i")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	if err := admin.CreateTableFromConf(ctx, &bigtable.TableConf{TableID: "sessions", Families: map[string]bigtable.GCPolicy{"sess": bigtable.MaxAgePolicy(time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	c, err := bigtable.NewClient(ctx, "p", "i")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c.Open("sessions")
}

// TestLoad: every session is written, renewed ones end with their last
// renewal's expiry, and the ledger holds what the table holds.
func TestLoad(t *testing.T) {
	raw := sessionsTable(t)
	now := func() time.Time { return testkit.Base }
	tbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), time.Hour)}, ttl.WithClock(now))
	if err != nil {
		t.Fatal(err)
	}
	l := &load{tbl: tbl, family: "sess", sessions: 50, span: time.Minute, life: [2]time.Duration{10 * time.Second, 40 * time.Second},
		renew: 0.5, seed: 7, now: now, sleep: func(context.Context, time.Duration) error { return nil }}
	sessions, err := l.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(sessions) != 50 {
		t.Fatalf("%d sessions", len(sessions))
	}
	for row, expiry := range sessions {
		if d := expiry.Sub(testkit.Base); d < 10*time.Second || d > 40*time.Second {
			t.Errorf("%s expires %v after the start", row, d)
		}
		r, err := tbl.ReadRow(context.Background(), row)
		if err != nil || len(r["sess"]) != 1 || !r["sess"][0].Timestamp.Time().Equal(expiry) {
			t.Errorf("%s: read %v, %v; the ledger says %v", row, r, err, expiry)
		}
	}

	// A session that cannot be written fails the load.
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	l.sleep = sleep
	if _, err := l.run(cancelled); err == nil || !strings.Contains(err.Error(), "50 of 50 sessions failed") {
		t.Errorf("cancelled load: %v", err)
	}
}

// TestCommands runs each subcommand as scripts/sweep-emulator.sh does:
// load writes a ledger, stamp keeps the event lines, judge passes the
// events of every session and fails without one, leftover finds expired
// cells.
func TestCommands(t *testing.T) {
	raw := sessionsTable(t)
	ctx := context.Background()
	dir := t.TempDir()
	ledger := filepath.Join(dir, "ledger.json")
	var out, errs bytes.Buffer
	if code := run(ctx, []string{"load", "-sessions", "5", "-span", "0s", "-min-life", "30s", "-max-life", "30s", "-renew", "0", "-ledger", ledger}, nil, &out, &errs); code != 0 {
		t.Fatalf("load: %d %s", code, errs.String())
	}
	var sessions map[string]time.Time
	b, _ := os.ReadFile(ledger)
	if err := json.Unmarshal(b, &sessions); err != nil || len(sessions) != 5 {
		t.Fatalf("ledger %s: %v", b, err)
	}

	// The sweep's output: an event per session, and a report line.
	var lines []string
	for row, expiry := range sessions {
		e := sweep.Event{Kind: sweep.Row, Table: "sessions", Row: row, Family: "sess", Column: "token", Timestamp: bigtable.Time(expiry), Expired: expiry}
		j, _ := json.Marshal(e)
		lines = append(lines, string(j))
	}
	lines = append(lines, `{"report":{"table":"sessions"}}`, "not json")
	events := filepath.Join(dir, "events.jsonl")
	out.Reset()
	if code := run(ctx, []string{"stamp", "-run", "0"}, strings.NewReader(strings.Join(lines, "\n")), &out, &errs); code != 0 {
		t.Fatalf("stamp: %d %s", code, errs.String())
	}
	if n := strings.Count(out.String(), "\n"); n != 5 {
		t.Fatalf("stamp kept %d lines:\n%s", n, out.String())
	}
	stampedAll := out.String()
	gaps := filepath.Join(dir, "gaps")
	os.WriteFile(gaps, []byte(testkit.Base.Format(time.RFC3339)+" "+testkit.Base.Add(time.Second).Format(time.RFC3339)+"\n"), 0o644)

	// The events arrive before the sessions expire: judge with a bound
	// of zero (every delay is negative) passes; without an event it fails.
	os.WriteFile(events, []byte(stampedAll), 0o644)
	out.Reset()
	if code := run(ctx, []string{"judge", "-ledger", ledger, "-events", events, "-gaps", gaps, "-bound", "0s"}, nil, &out, &errs); code != 0 || !strings.HasSuffix(strings.TrimSpace(out.String()), "PASS") {
		t.Errorf("judge: %d\n%s\n%s", code, out.String(), errs.String())
	}
	os.WriteFile(events, []byte(strings.SplitAfterN(stampedAll, "\n", 2)[1]), 0o644)
	out.Reset()
	if code := run(ctx, []string{"judge", "-ledger", ledger, "-events", events}, nil, &out, &errs); code != 1 || !strings.Contains(out.String(), "missing: 1") {
		t.Errorf("judge without an event: %d\n%s", code, out.String())
	}

	// leftover: the sessions expire in 30s; one cell expired before.
	before := time.Now().Add(time.Second).Format(time.RFC3339Nano)
	out.Reset()
	if code := run(ctx, []string{"leftover", "-before", before}, nil, &out, &errs); code != 0 || !strings.Contains(out.String(), "5 cells stored, 0 of them") {
		t.Errorf("leftover: %d %s %s", code, out.String(), errs.String())
	}
	m := bigtable.NewMutation()
	m.Set("sess", "token", bigtable.Time(time.Now().Add(-time.Minute)), nil)
	if err := raw.Apply(ctx, "old", m); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := run(ctx, []string{"leftover", "-before", before}, nil, &out, &errs); code != 1 || !strings.Contains(out.String(), "1 of them expired") {
		t.Errorf("leftover with an expired cell: %d %s", code, out.String())
	}
}

// TestBadCommandLines: each is refused with its status and a message.
func TestBadCommandLines(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte("nonsense\n"), 0o644)
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{nil, 2, "usage"},
		{[]string{"nope"}, 2, "unknown subcommand"},
		{[]string{"judge", "-nope"}, 2, "flag provided but not defined"},
		{[]string{"judge", "-ledger", filepath.Join(dir, "none")}, 1, "ledger"},
		{[]string{"judge", "-ledger", bad}, 1, "ledger"},
		{[]string{"leftover", "-before", "yesterday"}, 1, "-before"},
	} {
		t.Setenv("BIGTABLE_EMULATOR_HOST", "")
		var out, errs bytes.Buffer
		if code := run(ctx, tc.args, nil, &out, &errs); code != tc.code || !strings.Contains(errs.String(), tc.msg) {
			t.Errorf("%q: %d %q, want %d and %q", tc.args, code, errs.String(), tc.code, tc.msg)
		}
	}
	var out, errs bytes.Buffer
	if code := run(ctx, []string{"load"}, nil, &out, &errs); code != 1 || !strings.Contains(errs.String(), "BIGTABLE_EMULATOR_HOST is not set") {
		t.Errorf("load without an emulator: %d %q", code, errs.String())
	}
	ledger := filepath.Join(dir, "ledger.json")
	os.WriteFile(ledger, []byte("{}"), 0o644)
	for _, args := range [][]string{
		{"judge", "-ledger", ledger, "-events", bad},
		{"judge", "-ledger", ledger, "-events", filepath.Join(dir, "none")},
		{"judge", "-ledger", ledger, "-events", ledger, "-gaps", bad},
		{"judge", "-ledger", ledger, "-events", ledger, "-gaps", filepath.Join(dir, "none")},
	} {
		if code := run(ctx, args, nil, &out, &errs); code != 1 {
			t.Errorf("%q: %d", args, code)
		}
	}
}
