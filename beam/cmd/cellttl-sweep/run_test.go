package main

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"

	"github.com/cellttl/ttl/beam/cmd/internal/launchtest"
	"github.com/cellttl/ttl/spec"
	"github.com/cellttl/ttl/sweep"
)

// reset puts the flags and what they set back to their defaults.
func reset() {
	flag.CommandLine.Visit(func(f *flag.Flag) {
		if !strings.HasPrefix(f.Name, "test.") {
			f.Value.Set(f.DefValue)
		}
	})
	families, from, until, granularity = spec.Families{}, timeFlag{}, timeFlag{}, sweep.Cell
}

// runCmd runs the command with args, from the flags' defaults, and
// returns its exit status, what it printed and what it reported.
func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	reset()
	t.Cleanup(reset)
	var stdout, stderr strings.Builder
	code := run(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// newEmulator starts an emulator, points every client at it, and creates
// table events with family sess (onesecond) holding one cell that
// expires at 08:30 and one that expires at 10:00.
func newEmulator(t *testing.T) *bigtable.Table {
	t.Helper()
	return launchtest.Emulator(t, map[string]time.Time{
		"r1": time.Date(2030, 4, 30, 8, 30, 0, 0, time.UTC), "r2": time.Date(2030, 4, 30, 10, 0, 0, 0, time.UTC)})
}

// roundArgs are the flags of a round of table's family sess, from 08:00
// to 09:00, judged at 09:30.
func roundArgs(table, output string, more ...string) []string {
	return append([]string{"-project", "proj", "-instance", "inst", "-table", table, "-output", output,
		"-family", "sess=onesecond", "-from", "2030-04-30T08:00:00Z", "-until", "2030-04-30T09:00:00Z", "-now", "2030-04-30T09:30:00Z"}, more...)
}

// TestRunUsage checks that a bad command line exits 2, naming what is
// wrong (with the usage when the flags parsed), -help exits 0, and a
// round that ends before it starts exits 4.
func TestRunUsage(t *testing.T) {
	for _, tt := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"unknown flag", []string{"-nosuch"}, 2, "flag provided but not defined: -nosuch"},
		{"no flags", nil, 2, "cellttl-sweep: missing -project, -instance, -table, -output, -family, -from\nusage: cellttl-sweep"},
		{"bad family", []string{"-family", "sess=bogus"}, 2, `invalid value "sess=bogus" for flag -family`},
		{"bad from", []string{"-from", "soon"}, 2, `invalid value "soon" for flag -from: want a time such as 2030-04-30T09:00:00Z`},
		{"bad granularity", []string{"-granularity", "table"}, 2, `invalid value "table" for flag -granularity`},
		{"zero margin", roundArgs("events", "x.json", "-margin", "0s"), 2, "cellttl-sweep: -margin 0s: want a positive duration"},
		{"row values", roundArgs("events", "x.json", "-granularity", "row", "-values"), 2, "cellttl-sweep: -values: row events carry no value"},
		{"help", []string{"-help"}, 0, "-write-times"},
		{"not yet", []string{"-project", "proj", "-instance", "inst", "-table", "events", "-output", "x.json", "-family", "sess=onesecond",
			"-from", "2030-04-30T09:00:00Z", "-now", "2030-04-30T09:00:05Z"}, 4, "cellttl-sweep: not yet: the round ends before it starts"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCmd(t, tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d and %q", code, stderr, tt.code, tt.stderr)
			}
		})
	}
}

// TestRunRound runs a round with -delete on Prism against the emulator:
// it exits 0, prints the round, where its events and counts went and the
// next round's -from, writes the event of the cell that expired in the
// round, and deletes that cell only.
func TestRunRound(t *testing.T) {
	tbl := newEmulator(t)
	out := filepath.Join(t.TempDir(), "events.json")
	code, stdout, stderr := runCmd(t, roundArgs("events", out, "-delete", "-values")...)
	for _, w := range []string{": complete; 1 cell event, 1 cell expired, deleted in 1 row\n", "  events written to " + out + "; expired: 1 cell (17 B)\n",
		"; counts in " + out + ".report.json\n", "next round: -from 2030-04-30T09:00:00Z\n"} {
		if code != 0 || !strings.Contains(stdout, w) {
			t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s\nwant %q", code, stdout, stderr, w)
		}
	}
	b, err := os.ReadFile(out)
	if err != nil || strings.Count(string(b), "\n") != 1 || !strings.Contains(string(b), `"r1"`) {
		t.Errorf("the events written: %v\n%s", err, b)
	}
	for row, want := range map[string]bool{"r1": false, "r2": true} {
		r, err := tbl.ReadRow(context.Background(), row)
		if err != nil || (len(r) != 0) != want {
			t.Errorf("row %s after the round: %v, %v; want it kept: %v", row, r, err, want)
		}
	}
}

// TestRunFails checks that a round of a table that does not exist, one
// whose job fails (its output cannot be written: the watermark stays),
// and one of a server that does not answer each exit 1 naming what
// failed.
func TestRunFails(t *testing.T) {
	tbl := newEmulator(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "events.json")
	code, stdout, stderr := runCmd(t, roundArgs("nosuch", out)...)
	if code != 1 || stdout != "" || !strings.Contains(stderr, `cellttl-sweep: pipeline: table "nosuch": policy: table not found`) {
		t.Errorf("missing table: exit %d, stdout %q, stderr:\n%s\nwant exit 1 naming the table", code, stdout, stderr)
	}

	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runCmd(t, roundArgs("events", filepath.Join(notDir, "events.json"), "-delete")...)
	if code != 1 || stdout != "" || !strings.Contains(stderr, "cellttl-sweep: the job failed: ") ||
		!strings.Contains(stderr, "the watermark stays at -from: run the round again with -from 2030-04-30T08:00:00Z -until 2030-04-30T09:00:00Z\n") {
		t.Errorf("output not writable: exit %d, stdout %q, stderr:\n%s\nwant exit 1, the watermark kept", code, stdout, stderr)
	}
	if r, err := tbl.ReadRow(context.Background(), "r1"); err != nil || len(r) == 0 {
		t.Errorf("output not writable: row r1 %v, %v; want it kept", r, err)
	}

	t.Setenv("BIGTABLE_EMULATOR_HOST", "127.0.0.1:1")
	code, _, stderr = runCmd(t, roundArgs("events", out, "-connect-timeout", "300ms")...)
	if code != 1 || !strings.Contains(stderr, "cellttl-sweep: cannot reach Bigtable: the emulator at BIGTABLE_EMULATOR_HOST=127.0.0.1:1") {
		t.Errorf("no server: exit %d, stderr:\n%s\nwant exit 1, cannot reach", code, stderr)
	}
}
