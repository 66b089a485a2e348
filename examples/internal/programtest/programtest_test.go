package programtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/examples/internal/btenv"
	"github.com/cellttl/ttl/internal/emulator"
)

// recorder is a testing.TB that records failures instead of failing the
// test, so that the checks' verdicts can be checked.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	failed []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = append(r.failed, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

func (r *recorder) Fatal(args ...any) {
	r.Errorf("%s", fmt.Sprint(args...))
	runtime.Goexit()
}

// verdict runs check with a recorder on t and returns what it reported.
func verdict(t *testing.T, check func(testing.TB)) []string {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		check(r)
	}()
	<-done
	return r.failed
}

// story is the fake program's output: where it runs, then a line.
func story(target btenv.Target) string {
	where := "an in-process bttest emulator"
	if target.Instance != "" {
		where = "the emulator at <addr>"
	}
	return "Runs on " + where + "\nok\n"
}

// program is a fake example: it refuses a half-given target, as every
// example does, creates table "t", prints its story and deletes the table
// unless keep is set.
func program(keep bool) Program {
	return func(out io.Writer, target btenv.Target) error {
		if (target.Project == "") != (target.Instance == "") {
			return errors.New("give both -project and -instance, or neither")
		}
		if target.Instance != "" {
			e, err := emulator.Connect(emulatorHost())
			if err != nil {
				return err
			}
			defer e.Close()
			ctx := context.Background()
			if err := e.Admin.CreateTable(ctx, "t"); err != nil {
				return err
			}
			if !keep {
				if err := e.Admin.DeleteTable(ctx, "t"); err != nil {
					return err
				}
			}
		}
		_, err := io.WriteString(out, story(target))
		return err
	}
}

func TestPrints(t *testing.T) {
	if got := verdict(t, func(tb testing.TB) { Prints(tb, program(false), story(btenv.Target{})) }); len(got) != 0 {
		t.Errorf("the right story failed: %q", got)
	}
	got := verdict(t, func(tb testing.TB) { Prints(tb, program(false), "another story\n") })
	if len(got) != 1 || !strings.Contains(got[0], "the program printed") {
		t.Errorf("a wrong story: %q", got)
	}
	failing := func(io.Writer, btenv.Target) error { return errors.New("no table") }
	if got := verdict(t, func(tb testing.TB) { Prints(tb, failing, "") }); len(got) != 1 || got[0] != "no table" {
		t.Errorf("a failing program: %q", got)
	}
}

func TestPrintsEachTime(t *testing.T) {
	want := "Runs on an in-process bttest emulator\nok\n"
	withAddr := func(prog Program) Program {
		return func(out io.Writer, target btenv.Target) error {
			var b strings.Builder
			err := prog(&b, target)
			_, _ = io.WriteString(out, strings.Replace(b.String(), "<addr>", emulatorHost(), 1))
			return err
		}
	}
	if got := verdict(t, func(tb testing.TB) { PrintsEachTime(tb, want, withAddr(program(false)), withAddr(program(false))) }); len(got) != 0 {
		t.Errorf("two good runs failed: %q", got)
	}
	got := verdict(t, func(tb testing.TB) { PrintsEachTime(tb, want, withAddr(program(true))) })
	if len(got) != 1 || !strings.HasPrefix(got[0], "tables left: [t]") {
		t.Errorf("a run that leaves its table: %q", got)
	}
	got = verdict(t, func(tb testing.TB) { PrintsEachTime(tb, want, program(false)) })
	if len(got) != 1 || !strings.HasPrefix(got[0], "run 1 printed") {
		t.Errorf("a run that prints another address: %q", got)
	}
	got = verdict(t, func(tb testing.TB) { PrintsEachTime(tb, want, withAddr(program(true)), withAddr(program(true))) })
	if len(got) != 1 || !strings.Contains(got[0], "run 2:") {
		t.Errorf("a second run that fails: %q", got)
	}
}

func TestRefusesLeftBehind(t *testing.T) {
	create := func(e *emulator.Emulator) { e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": nil}) }
	if got := verdict(t, func(tb testing.TB) { RefusesLeftBehind(tb, program(false), create, "AlreadyExists") }); len(got) != 0 {
		t.Errorf("a refusal failed: %q", got)
	}
	got := verdict(t, func(tb testing.TB) {
		RefusesLeftBehind(tb, program(false), func(*emulator.Emulator) {}, "AlreadyExists")
	})
	if len(got) != 3 || !strings.HasPrefix(got[0], "run on a table left behind: <nil>") || !strings.HasPrefix(got[1], "printed") || !strings.HasPrefix(got[2], "tables: []") {
		t.Errorf("a program that does not refuse: %q", got)
	}
}

func TestRefusesHalfTarget(t *testing.T) {
	if got := verdict(t, func(tb testing.TB) { RefusesHalfTarget(tb, program(false)) }); len(got) != 0 {
		t.Errorf("a refusal failed: %q", got)
	}
	accepts := func(out io.Writer, _ btenv.Target) error { _, err := io.WriteString(out, "x"); return err }
	if got := verdict(t, func(tb testing.TB) { RefusesHalfTarget(tb, accepts) }); len(got) != 4 {
		t.Errorf("a program that accepts half a target: %q", got)
	}
}

// emulatorHost is the emulator OnEmulator pointed the test at.
func emulatorHost() string { return os.Getenv("BIGTABLE_EMULATOR_HOST") }
