package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"

	"github.com/cellttl/ttl/beam/cmd/internal/launchtest"
)

// reset puts the flags and what they set back to their defaults.
func reset() {
	flag.CommandLine.Visit(func(f *flag.Flag) {
		if !strings.HasPrefix(f.Name, "test.") {
			f.Value.Set(f.DefValue)
		}
	})
	family.name, family.to = "", ""
	from, start, startFlag, old = "", time.Time{}, "", "default"
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
// table events with family sess holding one cell written before the
// move's start, at a real timestamp.
func newEmulator(t *testing.T) {
	t.Helper()
	launchtest.Emulator(t, map[string]time.Time{"r1": time.Date(2030, 4, 30, 8, 50, 0, 0, time.UTC)})
}

// moveArgs are the flags of a move of family sess of table, from real
// timestamps to onesecond, started at 09:00 and judged at 09:10.
func moveArgs(table, output string, more ...string) []string {
	return append([]string{"-project", "proj", "-instance", "inst", "-table", table, "-output", output,
		"-family", "sess=onesecond", "-from", "none", "-start", "2030-04-30T09:00:00Z", "-old", "for:30m",
		"-skew", "1m", "-now", "2030-04-30T09:10:00Z"}, more...)
}

// TestRunUsage checks that a bad command line exits 2, naming what is
// wrong (with the usage when the flags parsed), -help exits 0, and a
// rewrite before the move's start exits 4.
func TestRunUsage(t *testing.T) {
	for _, tt := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"unknown flag", []string{"-nosuch"}, 2, "flag provided but not defined: -nosuch"},
		{"no flags", nil, 2, "cellttl-move-rewrite: missing -project, -instance, -table, -output, -family, -from, -start\nusage: cellttl-move-rewrite"},
		{"bad family", []string{"-family", "sess=bogus"}, 2, `invalid value "sess=bogus" for flag -family`},
		{"family without spec", []string{"-family", "sess"}, 2, "want NAME=onesecond or NAME=default:DURATION"},
		{"two families", []string{"-family", "a=onesecond", "-family", "b=onesecond"}, 2, "give the one family to move"},
		{"bad from", []string{"-from", "bogus"}, 2, `invalid value "bogus" for flag -from`},
		{"bad start", []string{"-start", "soon"}, 2, "want a time such as 2030-04-30T09:00:00Z"},
		{"bad old", []string{"-old", "bogus"}, 2, `invalid value "bogus" for flag -old`},
		{"help", []string{"-help"}, 0, "-dry-run"},
		{"not yet", append(moveArgs("events", "x.json"), "-now", "2030-04-30T08:00:00Z"), 4,
			"cellttl-move-rewrite: not yet: the move starts at 2030-04-30T09:00:00Z (-start), it is 2030-04-30T08:00:00Z (-now)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCmd(t, tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d and %q", code, stderr, tt.code, tt.stderr)
			}
		})
	}
}

// TestRunRewrite runs a dry run, then the rewrite, on Prism against the
// emulator: each exits 0 and prints its counts, the dry run saying it
// changed nothing.
func TestRunRewrite(t *testing.T) {
	newEmulator(t)
	out := filepath.Join(t.TempDir(), "counts.json")
	code, stdout, stderr := runCmd(t, moveArgs("events", out, "-dry-run")...)
	for _, w := range []string{`table "events" family "sess", `,
		"at 2030-04-30T09:10:00Z: old cells that would be rewritten in the new encoding: 1; left (changed meanwhile, or below a newer cell): 0; already expired: 0\n" +
			"dry run: nothing changed; run again without -dry-run\n"} {
		if code != 0 || !strings.Contains(stdout, w) {
			t.Errorf("dry run: exit %d, stdout:\n%s\nstderr:\n%s\nwant %q", code, stdout, stderr, w)
		}
	}

	code, stdout, stderr = runCmd(t, moveArgs("events", out)...)
	for _, w := range []string{`table "events" family "sess", `, "old cells rewritten in the new encoding: 1; left (changed meanwhile, or below a newer cell): 0; already expired: 0\n",
		"if the runner retried a shard, these counts may be low"} {
		if code != 0 || !strings.Contains(stdout, w) {
			t.Errorf("rewrite: exit %d, stdout:\n%s\nstderr:\n%s\nwant %q", code, stdout, stderr, w)
		}
	}
}

// TestRunFails checks that a rewrite of a table that does not exist, and
// one of a server that does not answer, exit 1 naming what failed.
func TestRunFails(t *testing.T) {
	newEmulator(t)
	out := filepath.Join(t.TempDir(), "counts.json")
	code, stdout, stderr := runCmd(t, moveArgs("nosuch", out)...)
	if code != 1 || stdout != "" || !strings.Contains(stderr, "cellttl-move-rewrite: ") || !strings.Contains(stderr, "nosuch") {
		t.Errorf("missing table: exit %d, stdout %q, stderr:\n%s\nwant exit 1 naming the table", code, stdout, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("missing table: counts were written")
	}

	t.Setenv("BIGTABLE_EMULATOR_HOST", "127.0.0.1:1")
	code, _, stderr = runCmd(t, moveArgs("events", out, "-connect-timeout", "300ms")...)
	if code != 1 || !strings.Contains(stderr, "cellttl-move-rewrite: cannot reach Bigtable: the emulator at BIGTABLE_EMULATOR_HOST=127.0.0.1:1") {
		t.Errorf("no server: exit %d, stderr:\n%s\nwant exit 1, cannot reach", code, stderr)
	}
}
