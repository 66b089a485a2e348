package faulty

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"cloud.google.com/go/bigtable"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cellttl/ttl/internal/emulator"
)

// prog makes three calls to the emulator at addr: an admin call, a write
// and a streamed read. With swallow it ignores the write's error.
func prog(addr string, swallow bool) error {
	ctx := context.Background()
	e, err := emulator.Connect(addr)
	if err != nil {
		return err
	}
	defer e.Close()
	if err := e.Admin.CreateTable(ctx, "t"); err != nil {
		return err
	}
	m := bigtable.NewMutation()
	m.DeleteRow()
	if err := e.Client.Open("t").Apply(ctx, "r", m); err != nil && !swallow {
		return err
	}
	_, err = e.Client.Open("t").ReadRow(ctx, "r")
	return err
}

// TestStart checks that a Server fails the call it was told to, and only
// that one, unary or streamed, and counts them all.
func TestStart(t *testing.T) {
	for fail, want := range []string{"", "CreateTable", "Apply", "ReadRow", ""} {
		s, err := Start(fail)
		if err != nil {
			t.Fatal(err)
		}
		err = prog(s.Addr, false)
		s.Close()
		if want == "" {
			if err != nil || s.Calls() != 3 {
				t.Errorf("failing call %d of 3: %v after %d calls, want success after 3", fail, err, s.Calls())
			}
			continue
		}
		if status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), Message) {
			t.Errorf("failing call %d (%s): %v", fail, want, err)
		}
		if s.Calls() != fail {
			t.Errorf("failing call %d (%s): %d calls made, want the program to stop there", fail, want, s.Calls())
		}
	}
}

// fakeTB records what EveryCall reports.
type fakeTB struct {
	testing.TB
	errors []string
	fatal  string
}

func (*fakeTB) Helper() { /* nothing to mark */ }
func (f *fakeTB) Errorf(format string, args ...any) {
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// every runs EveryCall on a fake test, as a test runs, and returns it.
func every(p func(string) error) (*fakeTB, int) { return upTo(0, p) }

// upTo runs EveryCall with limit on a fake test, and returns it.
func upTo(limit int, p func(string) error) (*fakeTB, int) {
	tb := new(fakeTB)
	calls := -1
	done := make(chan struct{})
	go func() {
		defer close(done)
		calls = EveryCall(tb, limit, p)
	}()
	<-done
	return tb, calls
}

// TestEveryCall checks what EveryCall accepts and what it reports: a
// program that reports every failure, one that ignores one (unless the
// limit stops before it), one that reports another error, and one that
// fails without any.
func TestEveryCall(t *testing.T) {
	tb, calls := every(func(addr string) error { return prog(addr, false) })
	if calls != 3 || tb.fatal != "" || len(tb.errors) != 0 {
		t.Errorf("a program that reports every failure: %d calls, fatal %q, errors %q", calls, tb.fatal, tb.errors)
	}

	tb, _ = every(func(addr string) error { return prog(addr, true) })
	if fmt.Sprint(tb.errors) != "[call 2 of 3 failed, and the program did not report it]" {
		t.Errorf("a program that ignores a failure: errors %q", tb.errors)
	}

	other := errors.New("something else")
	tb, _ = every(func(addr string) error {
		if err := prog(addr, false); err != nil {
			return other
		}
		return nil
	})
	if len(tb.errors) != 3 || !strings.HasSuffix(tb.errors[0], "reported another error: something else") {
		t.Errorf("a program that reports another error: errors %q", tb.errors)
	}

	// Only the first call failing: the ignored second is not seen.
	tb, calls = upTo(1, func(addr string) error { return prog(addr, true) })
	if calls != 3 || len(tb.errors) != 0 {
		t.Errorf("the first call of a program that ignores the second: %d calls, errors %q", calls, tb.errors)
	}

	tb, calls = every(func(string) error { return other })
	if tb.fatal != "with no call failing: something else" || calls != -1 {
		t.Errorf("a program that always fails: fatal %q, %d calls", tb.fatal, calls)
	}
}
