// Package programtest holds the checks every example program's tests
// make: that it prints its story on its in-process emulator, tells the
// same story again on an emulator it has used before, refuses a half-given
// target and a table left behind by a killed run, printing nothing.
package programtest

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/cellttl/ttl/examples/internal/btenv"
	"github.com/cellttl/ttl/internal/emulator"
)

// A Program is an example's run function with its fixed arguments (a
// simulated day, say) already given.
type Program func(out io.Writer, target btenv.Target) error

// Prints runs prog on its in-process emulator and checks every line it
// prints against want.
func Prints(t testing.TB, prog Program, want string) {
	t.Helper()
	t.Setenv("BIGTABLE_EMULATOR_HOST", "")
	var out bytes.Buffer
	if err := prog(&out, btenv.Target{}); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != want {
		t.Errorf("the program printed\n%s\nwant\n%s", got, want)
	}
}

// OnEmulator starts an emulator for the test, points
// BIGTABLE_EMULATOR_HOST at it, and returns it, the target that names its
// instance, and want as a run there prints it: with the emulator's
// address where the in-process run names "an in-process bttest emulator".
func OnEmulator(t testing.TB, want string) (*emulator.Emulator, btenv.Target, string) {
	t.Helper()
	e := emulator.StartForTest(t)
	t.Setenv("BIGTABLE_EMULATOR_HOST", e.Addr)
	target := btenv.Target{Project: emulator.Project, Instance: emulator.Instance}
	return e, target, strings.Replace(want, "an in-process bttest emulator", "the emulator at "+e.Addr, 1)
}

// PrintsEachTime runs each program in turn on one emulator of its own,
// each expected to print want (with the emulator's address), and checks
// that they leave no table behind.
func PrintsEachTime(t testing.TB, want string, progs ...Program) {
	t.Helper()
	e, target, want := OnEmulator(t, want)
	for i, prog := range progs {
		var out bytes.Buffer
		if err := prog(&out, target); err != nil {
			t.Fatalf("run %d: %v", i+1, err)
		}
		if got := out.String(); got != want {
			t.Errorf("run %d printed\n%s\nwant\n%s", i+1, got, want)
		}
	}
	if tables, err := e.Admin.Tables(context.Background()); err != nil || len(tables) != 0 {
		t.Errorf("tables left: %v, %v", tables, err)
	}
}

// RefusesLeftBehind checks that prog, on an emulator where create has
// made its table as a killed run would leave it, fails with an error
// containing wantErr, prints nothing and keeps the table.
func RefusesLeftBehind(t testing.TB, prog Program, create func(*emulator.Emulator), wantErr string) {
	t.Helper()
	e, target, _ := OnEmulator(t, "")
	create(e)
	var out bytes.Buffer
	err := prog(&out, target)
	if err == nil || !strings.Contains(err.Error(), wantErr) {
		t.Errorf("run on a table left behind: %v, want an error containing %q", err, wantErr)
	}
	if out.Len() != 0 {
		t.Errorf("printed %q", out.String())
	}
	if tables, err := e.Admin.Tables(context.Background()); err != nil || len(tables) != 1 {
		t.Errorf("tables: %v, %v", tables, err)
	}
}

// RefusesHalfTarget checks that prog, given a project without an
// instance and an instance without a project, says to give both or
// neither and prints nothing.
func RefusesHalfTarget(t testing.TB, prog Program) {
	t.Helper()
	for _, target := range []btenv.Target{{Project: "p"}, {Instance: "i"}} {
		var out bytes.Buffer
		err := prog(&out, target)
		if err == nil || err.Error() != "give both -project and -instance, or neither" {
			t.Errorf("run with %+v: %v", target, err)
		}
		if out.Len() != 0 {
			t.Errorf("run with %+v printed %q", target, out.String())
		}
	}
}
