package ttltest_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/ttltest"
)

// TestRefusals: what Start refuses, with the ttl sentinel and a message
// naming the input at fault; New fails its test with the same error.
func TestRefusals(t *testing.T) {
	for _, c := range []struct {
		name     string
		families map[string]ttl.Strategy
		opts     []ttltest.Option
		want     error
		says     string
	}{
		{"no family", nil, nil, ttl.ErrInvalidStrategy, "no family"},
		{"nil strategy", map[string]ttl.Strategy{"f": nil}, nil, ttl.ErrInvalidStrategy, `"f"`},
		{"invalid strategy", map[string]ttl.Strategy{"f": ttl.SequenceNumbers(0)}, nil, ttl.ErrInvalidStrategy, `"f"`},
		{"bad family name", map[string]ttl.Strategy{"a:b": ttl.OneSecond()}, nil, ttl.ErrInvalidStrategy, `"a:b"`},
		{"nil option", managed, []ttltest.Option{nil}, ttl.ErrInvalidOption, "option 0 is nil"},
		{"nil table option", managed, []ttltest.Option{ttltest.WithTableOptions(nil)}, ttl.ErrInvalidOption, "WithTableOptions: option 0"},
		{"bad table option", managed, []ttltest.Option{ttltest.WithTableOptions(ttl.WithReadMargin(-time.Second))}, ttl.ErrInvalidOption, "WithReadMargin(-1s)"},
		{"bad family", managed, []ttltest.Option{ttltest.WithFamily("", nil)}, ttl.ErrInvalidOption, "empty family name"},
		{"family twice", managed, []ttltest.Option{ttltest.WithFamily("x", nil), ttltest.WithFamily("x", nil)}, ttl.ErrInvalidOption, `"x" is given twice`},
		{"family managed", managed, []ttltest.Option{ttltest.WithFamily("sess", nil)}, ttl.ErrInvalidOption, `"sess" has a strategy`},
		{"start before 1970", managed, []ttltest.Option{ttltest.WithStart(time.Unix(-1, 0))}, ttl.ErrInvalidOption, "WithStart(1969-12-31T23:59:59Z)"},
		{"start within a millisecond", managed, []ttltest.Option{ttltest.WithStart(ttltest.DefaultStart.Add(time.Microsecond))}, ttl.ErrInvalidOption, "whole millisecond"},
		{"negative lag", managed, []ttltest.Option{ttltest.WithGCLag(-time.Second)}, ttl.ErrInvalidOption, "WithGCLag(-1s)"},
		{"empty table name", managed, []ttltest.Option{ttltest.WithTableName("")}, ttl.ErrInvalidOption, `WithTableName("")`},
		{"bad table name", managed, []ttltest.Option{ttltest.WithTableName("a/b")}, ttl.ErrInvalidOption, `WithTableName("a/b")`},
	} {
		env, err := ttltest.Start(c.families, c.opts...)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) || env != nil {
			t.Errorf("%s: Start: %v, %v; want an error wrapping %v that says %s", c.name, env, err, c.want, c.says)
		}
		r := record(t, func(tb testing.TB) { ttltest.New(tb, c.families, c.opts...) })
		if len(r.args) != 1 || !errors.Is(r.args[0].(error), c.want) {
			t.Errorf("%s: New failed its test with %v; want an error wrapping %v", c.name, r.args, c.want)
		}
	}
}

// TestFastForwardBackwards: the clock only moves forward; New's Env fails
// its test, Start's keeps the error for Err and then does nothing.
func TestFastForwardBackwards(t *testing.T) {
	r := record(t, func(tb testing.TB) {
		env := ttltest.New(tb, managed)
		env.FastForward(-time.Second)
		tb.Error("FastForward(-1s) returned")
	})
	if f := r.failures(); len(f) != 1 || !strings.Contains(f[0], "FastForward(-1s): the clock only moves forward") {
		t.Errorf("New's Env, FastForward(-1s): failures %q", f)
	}

	env, err := ttltest.Start(managed)
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	env.FastForward(-time.Second)
	if err := env.Err(); !errors.Is(err, ttl.ErrInvalidOption) {
		t.Errorf("Start's Env, FastForward(-1s): Err %v", err)
	}
	env.FastForward(time.Second)
	env.CollectGarbage()
	if !env.Now().Equal(ttltest.DefaultStart) || !errors.Is(env.Err(), ttl.ErrInvalidOption) {
		t.Errorf("after a failure: Now %v, Err %v; want the clock unmoved and the first error kept", env.Now(), env.Err())
	}
}

// TestClosed: a collection on a closed Env fails; Close twice is fine.
func TestClosed(t *testing.T) {
	for _, op := range []string{"FastForward", "CollectGarbage"} {
		env, err := ttltest.Start(managed)
		if err != nil {
			t.Fatal(err)
		}
		if err := env.Close(); err != nil {
			t.Fatal(err)
		}
		if op == "FastForward" {
			env.FastForward(time.Second)
		} else {
			env.CollectGarbage()
		}
		if err := env.Err(); !errors.Is(err, ttl.ErrNilArgument) || !strings.Contains(err.Error(), op+" on a closed Env") {
			t.Errorf("%s after Close: Err %v", op, err)
		}
		if err := env.Close(); err != nil {
			t.Errorf("a second Close: %v", err)
		}
	}
}

// TestTableGone: a collection that cannot read the table fails, naming it.
func TestTableGone(t *testing.T) {
	r := record(t, func(tb testing.TB) {
		env := ttltest.New(tb, managed)
		if err := env.Admin.DeleteTable(context.Background(), env.Name); err != nil {
			t.Error(err)
			return
		}
		env.CollectGarbage()
	})
	if f := r.failures(); len(f) != 1 || !strings.Contains(f[0], `reading table "ttltest"`) {
		t.Errorf("CollectGarbage of a deleted table: failures %q", f)
	}
}

// TestNilEnv: a nil Env's methods do not panic; Err says it is nil.
func TestNilEnv(t *testing.T) {
	var env *ttltest.Env
	env.FastForward(time.Second)
	env.CollectGarbage()
	if err := env.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if !env.Now().Equal(ttltest.DefaultStart) {
		t.Errorf("Now: %v", env.Now())
	}
	if err := env.Err(); !errors.Is(err, ttl.ErrNilArgument) {
		t.Errorf("Err: %v", err)
	}
}

// TestNewNilTB: New without a test has nothing to report to, and says so.
func TestNewNilTB(t *testing.T) {
	defer func() {
		if p := recover(); p == nil || !strings.Contains(p.(string), "use Start") {
			t.Errorf("New(nil): recovered %v", p)
		}
	}()
	ttltest.New(nil, managed)
}

// TestCloseErrorFailsTest: a New Env whose clients fail to close reports it
// when the test ends.
func TestCloseErrorFailsTest(t *testing.T) {
	var env *ttltest.Env
	r := &recorder{TB: t}
	t.Run("closing", func(t *testing.T) {
		r.TB = t
		env = ttltest.New(r, managed)
		// Closing the client first makes the Env's Close report it.
		if err := env.Client.Close(); err != nil {
			t.Fatal(err)
		}
	})
	if f := r.failures(); len(f) != 1 || !strings.Contains(f[0], "closing the Env") {
		t.Errorf("failures %q", f)
	}
}

// TestMisspelledFamily: through Env.Table, a write to a family the Env did
// not create is an unknown family, with the nearest name, not a lifetime
// the family does not support; a family of WithFamily is declared too,
// also when the test declares it itself.
func TestMisspelledFamily(t *testing.T) {
	for _, declared := range []bool{false, true} {
		opts := []ttltest.Option{ttltest.WithFamily("meta", nil)}
		if declared {
			opts = append(opts, ttltest.WithTableOptions(ttl.OtherFamilies("meta")))
		}
		misspell(t, ttltest.New(t, map[string]ttl.Strategy{"sess": ttl.OneSecond()}, opts...))
	}
}

// misspell checks the misspellings of TestMisspelledFamily on env.
func misspell(t *testing.T, env *ttltest.Env) {
	t.Helper()
	ctx := context.Background()
	set := func(family string, life ttl.Lifetime) error {
		m := ttl.NewMutation()
		m.Set(family, "c", []byte("v"), life)
		return env.Table.Apply(ctx, "r", m)
	}
	err := set("sesss", ttl.For(time.Minute))
	if !errors.Is(err, ttl.ErrUnknownFamily) || errors.Is(err, ttl.ErrLifetime) || !strings.Contains(err.Error(), `"sesss"`) ||
		!strings.Contains(err.Error(), `did you mean "sess"?`) {
		t.Errorf("Set(sesss): %v; want an unknown family that suggests sess", err)
	}
	if err := set("mta", ttl.Default); !errors.Is(err, ttl.ErrUnknownFamily) || !strings.Contains(err.Error(), `did you mean "meta"?`) {
		t.Errorf("Set(mta): %v; want an unknown family that suggests meta", err)
	}
	if err := set("meta", ttl.Default); err != nil {
		t.Errorf("Set(meta): %v", err)
	}
}
