package btenv

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
)

// The families the tests open tables with: one managed, one other.
var (
	managed = map[string]ttl.Strategy{"m": ttl.DefaultExpiration(time.Hour)}
	other   = "o"
)

// families lists a table's families with their GC policies, sorted.
func families(t *testing.T, admin *bigtable.AdminClient, table string) string {
	t.Helper()
	info, err := admin.TableInfo(context.Background(), table)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range info.FamilyInfos {
		out = append(out, f.Name+"="+f.GCPolicy)
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// onEmulator points BIGTABLE_EMULATOR_HOST at an emulator of the test's
// own, as a user points it at a running one, and returns its clients.
func onEmulator(t *testing.T) *emulator.Emulator {
	e := emulator.StartForTest(t)
	t.Setenv("BIGTABLE_EMULATOR_HOST", e.Addr)
	return e
}

// TestOpenInProcess checks the default: an emulator of the program's own,
// the table created with each managed family's policy and the others
// without, closed with the Env.
func TestOpenInProcess(t *testing.T) {
	ctx := context.Background()
	t.Setenv("BIGTABLE_EMULATOR_HOST", "")
	env, err := Open(ctx, Target{}, "x", managed, other)
	if err != nil {
		t.Fatal(err)
	}
	if env.Name != "cellttl-example-x" || env.Where != "an in-process bttest emulator" || !env.Emulated {
		t.Errorf("Name %q, Where %q, Emulated %v", env.Name, env.Where, env.Emulated)
	}
	if got := families(t, env.Admin, env.Name); got != "m=age() > 1h o=<never>" {
		t.Errorf("families %s, want m=age() > 1h o=<never>", got)
	}

	// The table is opened on the data client; DeleteRows deletes rows
	// whether or not they are stored.
	m := bigtable.NewMutation()
	m.Set("o", "c", bigtable.Time(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)), []byte("v"))
	for _, row := range []string{"a", "b", "c"} {
		if err := env.Table.Apply(ctx, row, m); err != nil {
			t.Fatal(err)
		}
	}
	if err := env.DeleteRows(ctx, "a", "c", "absent"); err != nil {
		t.Fatal(err)
	}
	var left []string
	if err := env.Table.ReadRows(ctx, bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		left = append(left, r.Key())
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(left) != "[b]" {
		t.Errorf("rows after DeleteRows(a, c, absent): %v, want [b]", left)
	}

	if err := env.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := env.Close(); err != nil {
		t.Errorf("second Close: %v, want nothing left to close", err)
	}
	if _, err := env.Admin.Tables(ctx); err == nil {
		t.Error("the clients still answer after Close")
	}
}

// TestOpenEmulatorHost: BIGTABLE_EMULATOR_HOST wins over the in-process
// emulator and over -project and -instance, which then only name the
// emulated instance.
func TestOpenEmulatorHost(t *testing.T) {
	ctx := context.Background()
	e := onEmulator(t)
	for _, tc := range []struct {
		target                Target
		wantProject, wantInst string
	}{
		{Target{}, "example-project", "example-instance"},
		{Target{Project: emulator.Project, Instance: emulator.Instance}, emulator.Project, emulator.Instance},
	} {
		env, err := Open(ctx, tc.target, "x", managed)
		if err != nil {
			t.Fatal(err)
		}
		if env.Where != "the emulator at "+e.Addr || !env.Emulated {
			t.Errorf("%+v: Where %q, Emulated %v", tc.target, env.Where, env.Emulated)
		}
		// The table is where the target says, on the test's emulator.
		admin, err := bigtable.NewAdminClient(ctx, tc.wantProject, tc.wantInst)
		if err != nil {
			t.Fatal(err)
		}
		if got := families(t, admin, "cellttl-example-x"); got != "m=age() > 1h" {
			t.Errorf("%+v: families %s on %s/%s", tc.target, got, tc.wantProject, tc.wantInst)
		}
		admin.Close()
		if err := env.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
	// Closing an Env leaves the emulator it did not start running.
	if _, err := e.Admin.Tables(ctx); err != nil {
		t.Errorf("the emulator after Close: %v", err)
	}
}

// TestOpenExisting checks an existing table: used as it is when it is the
// example's, completed when it lacks a family or a managed family has
// another policy, and refused, unchanged, when it has a family the
// example does not use.
func TestOpenExisting(t *testing.T) {
	ctx := context.Background()
	e := onEmulator(t)
	target := Target{Project: emulator.Project, Instance: emulator.Instance}
	open := func() error {
		env, err := Open(ctx, target, "y", managed, other)
		if err == nil {
			env.Close()
		}
		return err
	}
	const name = "cellttl-example-y"

	// A managed family with another policy, an other family missing.
	e.TableForTest(t, name, map[string]bigtable.GCPolicy{"m": bigtable.MaxVersionsPolicy(1)})
	if err := open(); err != nil {
		t.Fatal(err)
	}
	if got := families(t, e.Admin, name); got != "m=age() > 1h o=<never>" {
		t.Errorf("families after completing the table: %s", got)
	}
	// As it is: again.
	if err := open(); err != nil {
		t.Fatal(err)
	}
	if got := families(t, e.Admin, name); got != "m=age() > 1h o=<never>" {
		t.Errorf("families after opening it again: %s", got)
	}
	// Someone else's family: refused, and nothing changed.
	if err := e.Admin.CreateColumnFamily(ctx, name, "z"); err != nil {
		t.Fatal(err)
	}
	if err := e.Admin.SetGCPolicy(ctx, name, "m", bigtable.MaxVersionsPolicy(2)); err != nil {
		t.Fatal(err)
	}
	err := open()
	want := fmt.Sprintf(`table %s on the emulator at %s: exists with family "z", which the example does not use; not touching it`, name, e.Addr)
	if err == nil || err.Error() != want {
		t.Errorf("Open of a table with another family: %v, want %s", err, want)
	}
	if got := families(t, e.Admin, name); got != "m=versions() > 2 o=<never> z=<never>" {
		t.Errorf("families after the refusal: %s", got)
	}
}

// TestOpenFails checks the targets and states Open refuses, each with an
// error that says why.
func TestOpenFails(t *testing.T) {
	both := "give both -project and -instance, or neither"
	for _, target := range []Target{{Project: "p"}, {Instance: "i"}} {
		if _, err := Open(context.Background(), target, "x", managed); err == nil || err.Error() != both {
			t.Errorf("Open(%+v): %v, want %q", target, err, both)
		}
	}

	// A real instance, without credentials to reach it.
	t.Setenv("BIGTABLE_EMULATOR_HOST", "")
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", t.TempDir()+"/none.json")
	_, err := Open(context.Background(), Target{Project: "p", Instance: "i"}, "x", managed)
	if err == nil || !strings.HasPrefix(err.Error(), "connecting to projects/p/instances/i: ") {
		t.Errorf("Open of a real instance without credentials: %v", err)
	}

	// The context ends before the table is looked up.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Open(ctx, Target{}, "x", managed)
	if status.Code(errors.Unwrap(err)) != codes.Canceled ||
		!strings.HasPrefix(err.Error(), "table cellttl-example-x on an in-process bttest emulator: ") {
		t.Errorf("Open with a canceled context: %v, want Canceled, naming the table and where it is", err)
	}
}

// TestBegin: Begin opens the example's table with a context that has a
// deadline and that Close ends; a target Open refuses is refused, with no
// context.
func TestBegin(t *testing.T) {
	t.Setenv("BIGTABLE_EMULATOR_HOST", "")
	ctx, env, err := Begin(Target{}, "begin", managed)
	if err != nil {
		t.Fatal(err)
	}
	if got := families(t, env.Admin, env.Name); got != "m=age() > 1h" {
		t.Errorf("families %q", got)
	}
	if deadline, ok := ctx.Deadline(); !ok || time.Until(deadline) > time.Minute {
		t.Errorf("deadline %v, %v: want one within a minute", deadline, ok)
	}
	if _, err := env.Table.ReadRow(ctx, "r"); err != nil {
		t.Errorf("reading in the context: %v", err)
	}
	if err := env.Close(); err != nil || ctx.Err() != context.Canceled {
		t.Errorf("Close: %v, context %v: want it ended", err, ctx.Err())
	}

	ctx, env, err = Begin(Target{Project: "p"}, "begin", managed)
	if err == nil || ctx != nil || env != nil {
		t.Errorf("Begin of half a target: %v, %v, %v: want an error alone", ctx, env, err)
	}
}

// TestDeleteRowsFails: DeleteRows returns the error of the call.
func TestDeleteRowsFails(t *testing.T) {
	e := emulator.StartForTest(t)
	env := &Env{Table: e.Client.Open("missing")}
	if err := env.DeleteRows(context.Background(), "a"); err == nil || !strings.Contains(err.Error(), "NotFound") {
		t.Errorf("DeleteRows on a missing table: %v", err)
	}
}

// TestClose: Close runs the closers newest first, once each, and returns
// the first error.
func TestClose(t *testing.T) {
	var order []string
	closer := func(name string, err error) func() error {
		return func() error { order = append(order, name); return err }
	}
	first, second := errors.New("client"), errors.New("admin")
	env := &Env{closers: []func() error{
		closer("emulator", nil), closer("admin", second), closer("client", first),
	}}
	if err := env.Close(); err != first {
		t.Errorf("Close = %v, want %v", err, first)
	}
	if err := env.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	if got := strings.Join(order, " "); got != "client admin emulator" {
		t.Errorf("closed %s, want client admin emulator", got)
	}
}

// TestRegisterFlags: -project and -instance fill in the Target, which is
// the in-process emulator without them.
func TestRegisterFlags(t *testing.T) {
	fs := flag.NewFlagSet("example", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	target := RegisterFlags(fs)
	if *target != (Target{}) {
		t.Errorf("default target %+v, want the zero Target", *target)
	}
	if err := fs.Parse([]string{"-project", "p", "-instance", "i"}); err != nil {
		t.Fatal(err)
	}
	if *target != (Target{Project: "p", Instance: "i"}) {
		t.Errorf("target %+v, want p and i", *target)
	}
}

// TestDeleteTable checks the end of a run that created its own families:
// the table is deleted and said so after a success, deleted silently after
// a failure (whose error stands), and a failed deletion joins the run's
// error, naming the table.
func TestDeleteTable(t *testing.T) {
	ctx := context.Background()
	t.Setenv("BIGTABLE_EMULATOR_HOST", "")
	for _, runErr := range []error{nil, errors.New("the run failed")} {
		env, err := Open(ctx, Target{}, "drop", nil)
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		err = runErr
		env.DeleteTable(ctx, &out, &err)
		if err != runErr {
			t.Errorf("run error %v: DeleteTable made it %v", runErr, err)
		}
		want := "\nTable cellttl-example-drop deleted.\n"
		if runErr != nil {
			want = ""
		}
		if out.String() != want {
			t.Errorf("run error %v: printed %q, want %q", runErr, out.String(), want)
		}
		if _, err := env.Admin.TableInfo(ctx, env.Name); status.Code(err) != codes.NotFound {
			t.Errorf("run error %v: the table is still there (TableInfo: %v)", runErr, err)
		}
		// Deleting it again fails: the failure is joined to the run's.
		err = nil
		env.DeleteTable(ctx, &out, &err)
		if err == nil || !strings.Contains(err.Error(), "deleting table cellttl-example-drop") {
			t.Errorf("a second DeleteTable: error %v, want one naming the table", err)
		}
		env.Close()
	}
}

// TestTomorrow checks that an example's simulated day is the next
// midnight UTC.
func TestTomorrow(t *testing.T) {
	before := time.Now().UTC()
	got := Tomorrow()
	if got.Location() != time.UTC || got.Truncate(24*time.Hour) != got || !got.After(before) || got.Sub(before) > 24*time.Hour {
		t.Errorf("Tomorrow() = %v at %v: want the next midnight UTC", got, before)
	}
}
