package main

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"

	"github.com/cellttl/ttl/beam/cmd/internal/launchtest"
	"github.com/cellttl/ttl/spec"
)

// runCmd runs the command with args, and returns its exit status and
// what it reported; the flags it set go back to their defaults when the
// test ends.
func runCmd(t *testing.T, args ...string) (int, string) {
	t.Helper()
	t.Cleanup(func() {
		flag.CommandLine.Visit(func(f *flag.Flag) {
			if !strings.HasPrefix(f.Name, "test.") {
				f.Value.Set(f.DefValue)
			}
		})
		families = spec.Families{}
	})
	var stderr strings.Builder
	code := run(args, &stderr)
	return code, stderr.String()
}

// newEmulator starts an emulator, points every client at it, and creates
// table events with family sess holding one cell.
func newEmulator(t *testing.T) {
	t.Helper()
	launchtest.Emulator(t, map[string]time.Time{"r1": time.Date(2030, 4, 30, 8, 0, 0, 0, time.UTC)})
}

// TestRunUsage checks that a bad command line exits 2, naming what is
// wrong (with the usage when the flags parsed), and -help exits 0.
func TestRunUsage(t *testing.T) {
	for _, tt := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"unknown flag", []string{"-nosuch"}, 2, "flag provided but not defined: -nosuch"},
		{"no flags", nil, 2, "cellttl-audit: missing -project, -instance, -table, -output\nusage: cellttl-audit"},
		{"no table", []string{"-project", "p", "-instance", "i", "-output", "x.json"}, 2, "cellttl-audit: missing -table\n"},
		{"bad family", []string{"-family", "sess=forever"}, 2, `invalid value "sess=forever" for flag -family`},
		{"bad now", []string{"-project", "p", "-instance", "i", "-table", "t", "-output", "x.json", "-now", "soon"}, 2, `-now "soon"`},
		{"help", []string{"-help"}, 0, "-values"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stderr := runCmd(t, tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d and %q", code, stderr, tt.code, tt.stderr)
			}
		})
	}
}

// TestRunAudit runs an audit on Prism against the emulator: it exits 0,
// says where it wrote the audit, and the file holds the table's audit.
func TestRunAudit(t *testing.T) {
	newEmulator(t)
	out := filepath.Join(t.TempDir(), "audit.json")
	code, stderr := runCmd(t, "-project", "proj", "-instance", "inst", "-table", "events", "-family", "sess=onesecond",
		"-output", out, "-now", "2030-04-30T09:00:00Z", "-values")
	if want := `cellttl-audit: wrote the audit of table "events" to ` + out + "\n"; code != 0 || !strings.HasSuffix(stderr, want) {
		t.Fatalf("exit %d, stderr:\n%s\nwant exit 0 and %q", code, stderr, want)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var audit map[string]any
	if err := json.Unmarshal(b, &audit); err != nil || audit["table"] != "events" {
		t.Errorf("the audit written: %v\n%s", err, b)
	}
}

// TestRunFails checks that an audit of a table that does not exist, and
// one of a server that does not answer, exit 1 naming what failed.
func TestRunFails(t *testing.T) {
	newEmulator(t)
	out := filepath.Join(t.TempDir(), "audit.json")
	code, stderr := runCmd(t, "-project", "proj", "-instance", "inst", "-table", "nosuch", "-output", out)
	if code != 1 || !strings.Contains(stderr, "cellttl-audit: ") || !strings.Contains(stderr, "nosuch") {
		t.Errorf("missing table: exit %d, stderr:\n%s\nwant exit 1 naming the table", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("missing table: the audit was written")
	}

	t.Setenv("BIGTABLE_EMULATOR_HOST", "127.0.0.1:1")
	code, stderr = runCmd(t, "-project", "proj", "-instance", "inst", "-table", "events", "-output", out, "-connect-timeout", "300ms")
	if code != 1 || !strings.Contains(stderr, "cellttl-audit: cannot reach Bigtable: the emulator at BIGTABLE_EMULATOR_HOST=127.0.0.1:1") {
		t.Errorf("no server: exit %d, stderr:\n%s\nwant exit 1, cannot reach", code, stderr)
	}
}
