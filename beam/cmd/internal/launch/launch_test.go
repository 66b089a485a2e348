package launch

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable/bttest"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"

	"github.com/cellttl/ttl/beam/pipeline"
)

// cmd is the Command of the tests: New defines its flags on the
// command line's flag set, once.
var cmd = New("cellttl-x", "usage: cellttl-x ...\n", "the result")

// TestMain initializes Beam, as a command's main does once its flags are
// parsed: Run needs it.
func TestMain(m *testing.M) {
	flag.Parse()
	beam.Init()
	os.Exit(m.Run())
}

// set gives the command line's flags these values, and restores them
// when the test ends.
func set(t *testing.T, values map[string]string) {
	t.Helper()
	for name, v := range values {
		f := flag.CommandLine.Lookup(name)
		old := f.Value.String()
		if err := f.Value.Set(v); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Value.Set(old) })
	}
}

// TestTable checks the table and instant the flags give, and each
// refusal: missing flags (required included), a bad -now, a negative
// duration.
func TestTable(t *testing.T) {
	_, _, err := cmd.Table(Required{"family", ""})
	if err == nil || err.Error() != "missing -project, -instance, -table, -output, -family" {
		t.Errorf("no flags: %v", err)
	}
	set(t, map[string]string{"project": "p", "instance": "i", "table": "t", "output": "out.json", "app-profile": "batch"})
	tbl, now, err := cmd.Table()
	if err != nil || tbl != (pipeline.Table{Project: "p", Instance: "i", Table: "t", AppProfile: "batch"}) || !now.IsZero() {
		t.Errorf("Table() = %+v, %v, %v", tbl, now, err)
	}
	if cmd.Output() != "out.json" {
		t.Errorf("Output() = %q", cmd.Output())
	}
	set(t, map[string]string{"bigtable-project": "bp", "now": "2030-04-30T09:00:00Z"})
	tbl, now, err = cmd.Table()
	if err != nil || tbl.Project != "bp" || !now.Equal(time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)) {
		t.Errorf("-bigtable-project, -now: %+v, %v, %v", tbl, now, err)
	}
	set(t, map[string]string{"now": "tomorrow"})
	if _, _, err = cmd.Table(); err == nil || !strings.Contains(err.Error(), `-now "tomorrow": want a time such as`) {
		t.Errorf("-now tomorrow: %v", err)
	}
	set(t, map[string]string{"now": "", "connect-timeout": "-1s"})
	if _, _, err = cmd.Table(); !errors.Is(err, ErrNegative) || !strings.Contains(err.Error(), "-connect-timeout -1s") {
		t.Errorf("-connect-timeout -1s: %v", err)
	}
}

// TestReadJSON reads a file back, and says what is wrong with one that
// is missing or not JSON.
func TestReadJSON(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.json"), filepath.Join(dir, "bad.json")
	os.WriteFile(good, []byte(`{"n": 3}`), 0o644)
	os.WriteFile(bad, []byte(`{`), 0o644)
	var v struct{ N int }
	if err := ReadJSON(ctx, good, &v); err != nil || v.N != 3 {
		t.Errorf("good: %+v, %v", v, err)
	}
	if err := ReadJSON(ctx, bad, &v); err == nil {
		t.Error("bad: no error")
	}
	if err := ReadJSON(ctx, filepath.Join(dir, "missing.json"), &v); err == nil {
		t.Error("missing: no error")
	}
	if err := ReadJSON(ctx, "nosuchscheme://x/y", &v); err == nil {
		t.Error("unknown filesystem: no error")
	}
}

// TestReachServer checks Reach and the method against a server that
// answers (the table need not exist), without and with a timeout.
func TestReachServer(t *testing.T) {
	srv, err := bttest.NewServer("localhost:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	t.Setenv("BIGTABLE_EMULATOR_HOST", srv.Addr)
	tbl := pipeline.Table{Project: "p", Instance: "i", Table: "missing"}
	if err := Reach(context.Background(), tbl, 0); err != nil {
		t.Errorf("no timeout: %v", err)
	}
	if err := cmd.Reach(context.Background(), tbl); err != nil {
		t.Errorf("the method: %v", err)
	}
}

// TestRun runs a job on Prism, in this process: its result is written to
// -output as JSON, read back with ReadOutput.
func TestRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "result.json")
	set(t, map[string]string{"output": out})
	done, err := cmd.Run(context.Background(), io.Discard, func(_ context.Context, s beam.Scope) (beam.PCollection, error) {
		return beam.Create(s, 7), nil
	})
	var v int
	if rerr := cmd.ReadOutput(context.Background(), &v); !done || err != nil || rerr != nil || v != 7 {
		t.Errorf("Run: done %v, %v, result %v, %v", done, err, v, rerr)
	}
}

// TestExits checks that UsageError returns 2 and prints the usage,
// NotYet 4, Fail 1, each naming the command, and that Run returns the
// error of a job that cannot be built.
func TestExits(t *testing.T) {
	err := errors.New("boom")
	for _, tt := range []struct {
		how    string
		f      func(io.Writer, error) int
		stderr string
		code   int
	}{
		{"usage", cmd.UsageError, "cellttl-x: boom\nusage: cellttl-x ...\n", 2},
		{"notyet", cmd.NotYet, "cellttl-x: not yet: boom\n", 4},
		{"fail", cmd.Fail, "cellttl-x: boom\n", 1},
	} {
		var stderr strings.Builder
		if code := tt.f(&stderr, err); code != tt.code || stderr.String() != tt.stderr {
			t.Errorf("%s: %d, stderr %q; want %d and %q", tt.how, code, stderr.String(), tt.code, tt.stderr)
		}
	}
	set(t, map[string]string{"output": filepath.Join(t.TempDir(), "x.json")})
	done, got := cmd.Run(context.Background(), io.Discard, func(context.Context, beam.Scope) (beam.PCollection, error) { return beam.PCollection{}, err })
	if done || got != err {
		t.Errorf("a job that cannot be built: done %v, %v; want %v", done, got, err)
	}
}

// TestParse checks that Parse returns -1 once the flags parse, 0 after
// -help and 2 for a bad flag, naming it.
func TestParse(t *testing.T) {
	defer flag.CommandLine.Init(os.Args[0], flag.ExitOnError)
	defer flag.CommandLine.SetOutput(nil)
	var stderr strings.Builder
	if code := cmd.Parse([]string{"-table", "t2"}, &stderr); code != -1 || *cmd.table != "t2" || stderr.Len() != 0 {
		t.Errorf("-table t2: %d, -table %q, stderr %q", code, *cmd.table, stderr.String())
	}
	set(t, map[string]string{"table": ""})
	if code := cmd.Parse([]string{"-help"}, &stderr); code != 0 || !strings.Contains(stderr.String(), "-connect-timeout") {
		t.Errorf("-help: %d, stderr %q", code, stderr.String())
	}
	stderr.Reset()
	if code := cmd.Parse([]string{"-nosuch"}, &stderr); code != 2 || !strings.Contains(stderr.String(), "flag provided but not defined: -nosuch") {
		t.Errorf("-nosuch: %d, stderr %q", code, stderr.String())
	}
}
