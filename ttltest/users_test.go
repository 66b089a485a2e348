package ttltest_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
)

// The code under test of the scenarios: what a user of the library
// writes, each with the bug the package must let a test catch, reading
// raw and counting on GC (forget).

// sessions is a user's session store: a session lives 15 minutes after
// its login or its last use.
type sessions struct {
	tbl    *ttl.Table
	raw    bigtable.TableAPI
	forget bool // the bug: reads the raw table, counting on GC
}

const sessionLife = 15 * time.Minute

func (s sessions) login(ctx context.Context, user, token string) error {
	m := ttl.NewMutation()
	m.Set("sess", "token", []byte(token), ttl.For(sessionLife))
	return s.tbl.Apply(ctx, user, m)
}

// use renews the session, and reports whether there was one to renew.
func (s sessions) use(ctx context.Context, user string) (bool, error) {
	return s.tbl.Touch(ctx, user, "sess", "token", ttl.For(sessionLife))
}

// token returns the user's session token, if the user is logged in.
func (s sessions) token(ctx context.Context, user string) (string, bool, error) {
	var row bigtable.Row
	var err error
	if s.forget {
		row, err = s.raw.ReadRow(ctx, user, bigtable.RowFilter(bigtable.LatestNFilter(1)))
	} else {
		row, err = s.tbl.ReadRow(ctx, user)
	}
	if err != nil || len(row["sess"]) == 0 {
		return "", false, err
	}
	return string(row["sess"][0].Value), true, nil
}

// limiter is a user's rate limit: at most perMinute requests in any
// minute (six windows of 10 s) and perDay in a calendar day (UTC).
type limiter struct {
	tbl    *ttl.Table
	raw    bigtable.TableAPI
	forget bool // the bug: sums the raw counter cells, counting on GC
}

const (
	perMinute = 10
	perDay    = 50
)

var (
	minuteWindow = ttl.Window{Size: 10 * time.Second, Keep: 50 * time.Second}
	dayWindow    = ttl.Window{Size: 24 * time.Hour}
)

// allow counts one request of user and reports whether it is allowed.
func (l limiter) allow(ctx context.Context, user string) (bool, error) {
	m := ttl.NewMutation()
	m.Add("hits", "minute", 1, minuteWindow)
	m.Add("hits", "day", 1, dayWindow)
	if err := l.tbl.Apply(ctx, user, m); err != nil {
		return false, err
	}
	inMinute, err := l.sum(ctx, user, "minute", minuteWindow, 6)
	if err != nil {
		return false, err
	}
	inDay, err := l.sum(ctx, user, "day", dayWindow, 1)
	return inMinute <= perMinute && inDay <= perDay, err
}

func (l limiter) sum(ctx context.Context, user, column string, w ttl.Window, n int) (int64, error) {
	if !l.forget {
		return l.tbl.SumCounter(ctx, user, "hits", column, w, n)
	}
	row, err := l.raw.ReadRow(ctx, user, bigtable.RowFilter(bigtable.ColumnFilter(column)))
	var sum int64
	for _, it := range row["hits"] {
		sum += int64(binary.BigEndian.Uint64(it.Value))
	}
	return sum, err
}

// A recorder is a testing.TB that records failures instead of failing:
// a user's test run on it shows whether that test would fail. Cleanup,
// Helper and logging go to the real test.
type recorder struct {
	testing.TB
	mu    sync.Mutex
	fails []string
	args  []any // of the first Fatal
}

func (r *recorder) fail(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fails = append(r.fails, msg)
}

func (r *recorder) Error(args ...any)                 { r.fail(fmt.Sprint(args...)) }
func (r *recorder) Errorf(format string, args ...any) { r.fail(fmt.Sprintf(format, args...)) }
func (r *recorder) Fail()                             { r.fail("Fail") }
func (r *recorder) FailNow()                          { r.fail("FailNow"); runtime.Goexit() }
func (r *recorder) Failed() bool                      { return len(r.failures()) > 0 }

func (r *recorder) Fatal(args ...any) {
	r.mu.Lock()
	if r.args == nil {
		r.args = args
	}
	r.mu.Unlock()
	r.fail(fmt.Sprint(args...))
	runtime.Goexit()
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.fail(fmt.Sprintf(format, args...))
	runtime.Goexit()
}

func (r *recorder) failures() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.fails...)
}

// record runs test on a recorder, in a goroutine of its own as Fatal
// ends it, and returns the recorder once test has returned or stopped.
func record(t *testing.T, test func(testing.TB)) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		test(r)
	}()
	<-done
	return r
}
