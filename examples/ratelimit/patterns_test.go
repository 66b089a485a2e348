package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/examples/internal/btenv"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
)

// perSpan is the rule of the tests, issue 28's: at most 20 requests in
// the last 5 windows of a second.
var perSpan = rule{col: "req", w: ttl.Window{Size: time.Second, Keep: 4 * time.Second}, n: 5, max: 20}

// servers is the number of servers that limit one key at once.
const servers = 8

// A pattern is strict or refunding.
type pattern func(ctx context.Context, tbl *ttl.Table, now func() time.Time, row string, r rule) (bool, int64, error)

// counterTables makes a table with the counter family on a fresh
// emulator, and k ttl.Tables on it, one a server, whose clocks are
// clocks[i] (or the one clock, if only one is given).
func counterTables(t *testing.T, clocks ...func() time.Time) []*ttl.Table {
	t.Helper()
	e := emulator.StartForTest(t)
	sum := bigtable.AggregateType{Input: bigtable.Int64Type{}, Aggregator: bigtable.SumAggregator{}}
	if err := e.Admin.CreateTableFromConf(context.Background(), &bigtable.TableConf{TableID: "t",
		ColumnFamilies: map[string]bigtable.Family{family: {ValueType: sum}}}); err != nil {
		t.Fatal(err)
	}
	raw := e.Client.Open("t")
	tables := make([]*ttl.Table, len(clocks))
	for i, now := range clocks {
		tbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{family: strategy}, ttl.WithClock(now))
		if err != nil {
			t.Fatal(err)
		}
		tables[i] = tbl
	}
	return tables
}

// TestRefundsLandingLate is issue 28's stumble 11, step by step: 8
// servers limiting one key to 20 in 5 windows let 28 through in one span
// when they refund. The window before the span has 20 allowed; in its
// last millisecond each server counts one more request, which is refused,
// and refunds it after the edge: the span's first window holds 8 refunds
// and no count, so its sum starts at −8, and 28 requests are allowed in
// its last window. That is the bound refunding states, max + 8 in flight,
// and reached. Strict, where the refused keep their count, lets 20
// through: the limit.
func TestRefundsLandingLate(t *testing.T) {
	ctx := context.Background()
	start := testkit.Base.Truncate(time.Second) // the span's first window
	for _, c := range []struct {
		name    string
		refunds bool
		want    int
	}{{"refunding", true, 28}, {"strict", false, 20}} {
		t.Run(c.name, func(t *testing.T) {
			clock := testkit.NewClock(start.Add(-time.Second))
			tbl := counterTables(t, clock.Now)[0]
			for i := range 20 {
				if ok, sum, err := strict(ctx, tbl, clock.Now, "k", perSpan); err != nil || !ok {
					t.Fatalf("request %d before the span: allowed %v on %d, %v", i+1, ok, sum, err)
				}
			}
			clock.Set(start.Add(-time.Millisecond))
			for i := range servers { // one request each, in flight across the edge
				if ok, sum, err := strict(ctx, tbl, clock.Now, "k", perSpan); err != nil || ok {
					t.Fatalf("server %d's request at the edge: allowed %v on %d, %v", i, ok, sum, err)
				}
			}
			clock.Set(start)
			if c.refunds {
				for range servers {
					if err := refund(ctx, tbl, "k", perSpan); err != nil {
						t.Fatal(err)
					}
				}
			}
			// The span's last window: the window before it has left it.
			clock.Set(start.Add(4 * time.Second))
			decide := strict
			if c.refunds {
				decide = refunding
			}
			allowed := 0
			for range 40 {
				ok, _, err := decide(ctx, tbl, clock.Now, "k", perSpan)
				if err != nil {
					t.Fatal(err)
				}
				if ok {
					allowed++
				}
			}
			if allowed != c.want {
				t.Errorf("%d allowed in the span from %v, want %d", allowed, start.Format(time.TimeOnly), c.want)
			}
		})
	}
}

// A ticker is a clock shared by the servers that moves on every reading,
// by a step drawn at random: mostly 5 ms, one in 30 up to a second, one
// in 150 a lull of 3 to 8 s, so that requests crowd some windows, leave
// others empty, and every burst after a lull meets empty spans. Every
// reading is later than the one before, as a real clock's.
type ticker struct {
	mu  sync.Mutex
	t   time.Time
	rnd *rand.Rand
}

func (c *ticker) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	step := 5 * time.Millisecond
	switch r := c.rnd.IntN(150); {
	case r == 0: // a lull that empties every span
		step = time.Duration(3000+c.rnd.IntN(5000)) * time.Millisecond
	case r < 6:
		step = time.Duration(c.rnd.IntN(1000)+1) * time.Millisecond
	}
	c.t = c.t.Add(step)
	return c.t
}

// A server reads the ticker through its own clock, which remembers the
// first instant it gave since marked: the instant strict takes before it
// counts.
type server struct {
	clock  *ticker
	marked bool
	first  time.Time
}

func (s *server) now() time.Time {
	t := s.clock.now()
	if s.marked {
		s.first, s.marked = t, false
	}
	return t
}

// TestPatternsUnderContention runs 8 servers at once, each deciding one
// request at a time on its own ttl.Table, on a clock that moves with
// every reading, over some hundred windows, and counts the requests
// allowed in every span of 5 windows (by the window of their count):
// strict never lets more than the limit through, refunding never more
// than the limit plus 8. A request whose count and read fall in two
// windows happens here as it does on a real clock, and is refused.
func TestPatternsUnderContention(t *testing.T) {
	for _, c := range []struct {
		name    string
		decide  pattern
		allowed int
	}{{"strict", strict, int(perSpan.max)}, {"refunding", refunding, int(perSpan.max) + servers}} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			clock := &ticker{t: testkit.Base.Truncate(time.Second), rnd: rand.New(rand.NewPCG(28, 11))}
			srv := make([]*server, servers)
			clocks := make([]func() time.Time, servers)
			for i := range srv {
				srv[i] = &server{clock: clock}
				clocks[i] = srv[i].now
			}
			tables := counterTables(t, clocks...)
			requests := 200 // per server
			if testing.Short() {
				requests = 50
			}
			var (
				mu      sync.Mutex
				perWin  = map[int64]int{} // allowed, by the window of their count
				refused atomic.Int64
				wg      sync.WaitGroup
				errs    = make(chan error, servers)
			)
			for i := range servers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range requests {
						srv[i].marked = true
						ok, _, err := c.decide(ctx, tables[i], srv[i].now, "k", perSpan)
						if err != nil {
							errs <- fmt.Errorf("server %d: %w", i, err)
							return
						}
						if !ok {
							refused.Add(1)
							continue
						}
						mu.Lock()
						perWin[srv[i].first.UnixMilli()/perSpan.w.Size.Milliseconds()]++
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			first, last := int64(1<<62), int64(0)
			for w := range perWin {
				first, last = min(first, w), max(last, w)
			}
			most, over, spans := 0, 0, 0
			for w := first - int64(perSpan.n) + 1; w <= last; w++ {
				n := 0
				for k := w; k < w+int64(perSpan.n); k++ {
					n += perWin[k]
				}
				if n > c.allowed {
					t.Errorf("%d allowed in the span of windows %d to %d, more than %d", n, w-first, w-first+int64(perSpan.n)-1, c.allowed)
				}
				most, spans = max(most, n), spans+1
				if n > int(perSpan.max) {
					over++
				}
			}
			total := 0
			for _, n := range perWin {
				total += n
			}
			if total == 0 || refused.Load() == 0 {
				t.Fatalf("%d allowed, %d refused: the test decided nothing both ways", total, refused.Load())
			}
			t.Logf("%d requests over %d windows: %d allowed, %d refused; at most %d allowed in one span of %d windows, %d spans over the limit of %d",
				servers*requests, last-first+1, total, refused.Load(), most, perSpan.n, over, perSpan.max)
		})
	}
}

// TestEdgeRefused: a request counted in a span's last window and read in
// the next is refused, though the sum it read is under the limit: that
// sum left out the span's first window, which holds 20 allowed already.
// Strict and the story's limiter refuse it alike.
func TestEdgeRefused(t *testing.T) {
	ctx := context.Background()
	start := testkit.Base.Truncate(10 * time.Second) // a window of both rules
	clock := btenv.NewClock(start)
	// The tables' clock moves to the next window once the request's write
	// has read it: its reads fall after the edge.
	var moveAt atomic.Int64
	moveAt.Store(-1)
	var reads atomic.Int64
	edgy := func() time.Time {
		now := clock.Now()
		if reads.Add(1) == moveAt.Load() {
			clock.Set(clock.Now().Add(time.Millisecond))
		}
		return now
	}
	tbl := counterTables(t, edgy)[0]
	for range 20 {
		if ok, _, err := strict(ctx, tbl, clock.Now, "k", perSpan); err != nil || !ok {
			t.Fatalf("allowed %v, %v", ok, err)
		}
	}
	clock.Set(start.Add(5*time.Second - time.Millisecond)) // the span's last window
	moveAt.Store(reads.Load() + 1)
	ok, sum, err := strict(ctx, tbl, clock.Now, "k", perSpan)
	if err != nil || ok || sum != 1 {
		t.Errorf("strict at the edge: allowed %v on a sum of %d, %v; want refused on 1", ok, sum, err)
	}

	// The story's limiter, counting before midnight and reading after it:
	// the day's sum, of day 2, leaves the count out.
	tbl = counterTables(t, edgy)[0]
	day2 := start.Truncate(24 * time.Hour).Add(24 * time.Hour)
	clock.Set(day2.Add(-time.Millisecond))
	l := newLimiter(tbl, clock, io.Discard, day2.Add(-24*time.Hour))
	moveAt.Store(reads.Load() + 1)
	d, inMinute, inDay, err := l.request(ctx, "dave")
	if err != nil || d != refusedEdge || inMinute != 1 || inDay != 0 {
		t.Errorf("the limiter at midnight: %q on %d and %d, %v; want %q on 1 and 0", d, inMinute, inDay, err, refusedEdge)
	}
}
