package main

import (
	"errors"
	"flag"
	"strings"
	"testing"

	"github.com/cellttl/ttl/beam/pipeline"
	"github.com/cellttl/ttl/scan"
)

// TestConfigNotYet checks that a round whose end, -now less -margin, is
// not after -from is "not yet" (exit 4), while an -until not after -from
// is a bad command line.
func TestConfigNotYet(t *testing.T) {
	for name, value := range map[string]string{"project": "p", "instance": "i", "table": "t", "output": "/tmp/x",
		"family": "sess=onesecond", "from": "2030-04-30T09:00:00Z", "now": "2030-04-30T09:00:05Z"} {
		if err := flag.Set(name, value); err != nil {
			t.Fatal(name, err)
		}
	}
	if _, err := config(); !errors.Is(err, errNotYet) {
		t.Errorf("a round ending before it starts: %v, want errNotYet", err)
	}
	if err := flag.Set("until", "2030-04-30T08:00:00Z"); err != nil {
		t.Fatal(err)
	}
	_, err := config()
	if err == nil || errors.Is(err, errNotYet) || err.Error() != "-until 2030-04-30T08:00:00Z is not after -from 2030-04-30T09:00:00Z: a round ends after it starts" {
		t.Errorf("-until before -from: %v, want a bad command line", err)
	}
	if err := flag.Set("until", "2030-04-30T09:30:00Z"); err != nil {
		t.Fatal(err)
	}
	if _, err := config(); err != nil {
		t.Errorf("a round of half an hour: %v", err)
	}
}

// TestConfigSchedule checks that -schedule makes the round a scheduled
// one, of that schedule table, and that its result says so.
func TestConfigSchedule(t *testing.T) {
	for name, value := range map[string]string{"project": "p", "instance": "i", "table": "t", "output": "/tmp/x",
		"from": "2030-04-30T09:00:00Z", "now": "2030-04-30T10:00:00Z", "schedule": "t_sched"} {
		if err := flag.Set(name, value); err != nil {
			t.Fatal(name, err)
		}
	}
	if len(families.Specs) == 0 { // -family repeats: set once for the package's tests
		if err := flag.Set("family", "sess=onesecond"); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { flag.Set("schedule", "") })
	cfg, err := config()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Schedule != "t_sched" {
		t.Errorf("-schedule t_sched: the round's schedule is %q", cfg.Schedule)
	}

	r := &pipeline.SweepResult{Table: "t", Granularity: "cell", Output: "/tmp/x", Events: 3, Delete: true, Deleted: 2,
		Schedule: "t_sched", EntriesDeleted: 5, Read: scan.Stats{Reads: 70, Shards: 64, ShardsRead: 64}}
	var b strings.Builder
	printResult(&b, r, "/tmp/x.report.json")
	out := b.String()
	for _, want := range []string{": complete; 3 cell events, 0 cells expired, deleted in 2 rows\n", "expired: 0 cells (0 B); entries of the schedule deleted: 5\n",
		`read 64 shards, 70 reads, 0 rows and 0 cells seen, 0 cells returned through schedule table "t_sched"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the result printed:\n%s\nwant %q in it", out, want)
		}
	}
}
