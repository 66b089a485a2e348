package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/sweep"
)

// A round that -round-timeout ended before it began (Bigtable out of
// reach while the round reads the policies) says so on stderr and counts
// as a round that failed; one that the command's own end cancelled (an
// interrupt, SIGTERM) says nothing.
func TestSweepRoundTimeoutSaysSo(t *testing.T) {
	c := &config{}
	c.sweep.every = 3 * time.Second
	var stdout, stderr bytes.Buffer
	o := newSweepOutput(c, &stdout, &stderr)
	timedOut := fmt.Errorf("%w of 5s (Options.RoundTimeout); the next resumes it: %w", sweep.ErrRoundTimeout, context.DeadlineExceeded)
	o.round(nil, timedOut)
	if !strings.Contains(stderr.String(), "did not finish within its timeout of 5s") || o.rounds != 1 || o.err == nil {
		t.Errorf("a round that timed out: stderr %q, rounds %d, err %v", stderr.String(), o.rounds, o.err)
	}
	stderr.Reset()
	o.round(nil, context.Canceled)
	if stderr.Len() != 0 || o.rounds != 1 {
		t.Errorf("a round the command's end cancelled: stderr %q, rounds %d", stderr.String(), o.rounds)
	}
}

// TestSweepFailedRoundJSONLine checks that a round that failed without a
// report (here -round-timeout, at its policy read) still ends with its
// JSON line {"report": null, "error": …} on stdout, as sweep -h promises.
func TestSweepFailedRoundJSONLine(t *testing.T) {
	c := &config{}
	c.sweep.every = 3 * time.Second
	c.format.json = true
	var stdout, stderr bytes.Buffer
	o := newSweepOutput(c, &stdout, &stderr)
	timedOut := fmt.Errorf("%w of 5s (Options.RoundTimeout); the next resumes it: policy: table \"big\": %w", sweep.ErrRoundTimeout, context.DeadlineExceeded)
	o.round(nil, timedOut)
	want := `{"report":null,"error":"sweep: the round did not finish within its timeout of 5s (Options.RoundTimeout); the next resumes it: policy: table \"big\": context deadline exceeded"}` + "\n"
	if stdout.String() != want {
		t.Errorf("stdout %q, want %q", stdout.String(), want)
	}
}

// TestSweepBlockedRoundJSONLine runs sweep -round-timeout -format json
// against an emulator that stops answering once the round begins: the
// round fails at its policy read, and stdout still ends with its line.
func TestSweepBlockedRoundJSONLine(t *testing.T) {
	e, _ := startEmulator(t, map[string]bigtable.GCPolicy{"sess": bigtable.MaxAgePolicy(time.Second), "clicks": bigtable.MaxAgePolicy(time.Hour)})
	p := newFreezingProxy(t, e.Addr)
	t.Setenv("BIGTABLE_EMULATOR_HOST", p.addr)
	clock := testkit.NewClock(sweepBase.Add(time.Minute))
	old := sweepNow
	sweepNow = func() time.Time {
		if strings.Contains(string(debug.Stack()), "sweep.(*Sweeper).Once") { // the round began
			p.freeze()
		}
		return clock.Now()
	}
	t.Cleanup(func() { sweepNow = old })
	var out, errs bytes.Buffer
	code := execute(sweepArgs(append(since, "-round-timeout", "1s", "-format", "json")...), &out, &errs)
	if code != exitFailed {
		t.Errorf("exit %d, want %d; stderr %q", code, exitFailed, errs.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var last struct {
		Report *sweep.Report `json:"report"`
		Error  string        `json:"error"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || !strings.Contains(last.Error, "did not finish within its timeout of 1s") {
		t.Errorf("stdout %q: the last line %+v (%v) is not the failed round's report line", out.String(), last, err)
	}
}

// A freezingProxy forwards TCP connections to an address until frozen;
// then it stops forwarding, holding the connections open, as a network
// cut does.
type freezingProxy struct {
	addr   string
	frozen chan struct{}
	once   sync.Once
}

// newFreezingProxy starts a proxy to target, closed when the test ends.
func newFreezingProxy(t *testing.T, target string) *freezingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &freezingProxy{addr: ln.Addr().String(), frozen: make(chan struct{})}
	done := make(chan struct{})
	var conns []net.Conn
	var mu sync.Mutex
	t.Cleanup(func() {
		close(done)
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, in, out)
			mu.Unlock()
			go p.pipe(in, out, done)
			go p.pipe(out, in, done)
		}
	}()
	return p
}

// freeze stops the forwarding.
func (p *freezingProxy) freeze() { p.once.Do(func() { close(p.frozen) }) }

// pipe copies from src to dst until frozen, then waits for done.
func (p *freezingProxy) pipe(src, dst net.Conn, done chan struct{}) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		select {
		case <-p.frozen:
			<-done
			return
		default:
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// TestSweepWarnsPolicy checks that sweep says, as check does, when a
// family's GC policy is not the one its -family spec needs (here the
// table keeps expired cells an hour, the spec says a day), and still
// sweeps; a family that matches says nothing.
func TestSweepWarnsPolicy(t *testing.T) {
	startEmulator(t, map[string]bigtable.GCPolicy{"sess": bigtable.MaxAgePolicy(time.Hour)})
	sweepClock(t, sweepBase.Add(time.Minute))
	args := append(with("sweep", "-since", "2030-04-30T09:00:00Z", "-family"), "sess=grace:1d:onesecond")
	_, stderr, code := cellttl(args...)
	if code != exitOK ||
		!strings.Contains(stderr, `cellttl sweep: warning: table "t": family "sess" (Grace(OneSecond(), 24h0m0s)): found maxage=1h, want maxage=1d`) ||
		!strings.Contains(stderr, `"cellttl check" says the same, "cellttl ensure" shows what it would change`) {
		t.Errorf("a policy other than the spec's: exit %d, stderr %q", code, stderr)
	}
	args = append(with("sweep", "-since", "2030-04-30T09:00:00Z", "-family"), "sess=grace:1h:onesecond")
	if _, stderr, code = cellttl(args...); code != exitOK || strings.Contains(stderr, "warning") {
		t.Errorf("the policy of the spec: exit %d, stderr %q", code, stderr)
	}
}
