package sweep_test

import (
	"bytes"
	"context"
	"errors"
	"log"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/sweep"
)

// docSweep is docs/sweeps.md's "A sweep from Go": the lines between the
// markers are the guide's, which TestDocSweepIsTheGuides checks.
func docSweep(ctx context.Context, admin *bigtable.AdminClient, client *bigtable.Client) error {
	// docs/sweeps.md begins
	families := map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), time.Hour)}
	s, err := sweep.New(admin, client.Open("sessions"), "sessions", families, sweep.Options{
		Granularity: sweep.Row,                         // one event per session
		Checkpoint:  scan.FileCheckpoint("sweep.json"), // resume after a restart
		Since:       time.Now().Add(-time.Hour),        // a new sweep's first round starts here: without Since, it reports nothing
	})
	if err != nil {
		return err
	}
	err = s.Every(ctx, time.Minute, func(ctx context.Context, events []sweep.Event) error {
		for _, e := range events {
			log.Printf("session %s expired at %v (event %s)", e.Row, e.Expired, e.ID())
		}
		return nil // only now are these events recorded as delivered
	}, func(r *sweep.Report, err error) {
		if err != nil || !r.Complete() {
			log.Printf("sweep: %v %v", r, err)
		}
	})
	// docs/sweeps.md ends
	return err
}

// TestDocSweepIsTheGuides: the guide's code is docSweep's, line for line.
func TestDocSweepIsTheGuides(t *testing.T) {
	guide, err := os.ReadFile("../docs/sweeps.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(guide), "## A sweep from Go\n\n```go\n")
	block, _, ok := strings.Cut(section, "```\n")
	if !ok {
		t.Fatal(`docs/sweeps.md has no go block under "## A sweep from Go"`)
	}
	src, err := os.ReadFile("docexample_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := strings.Cut(string(src), "\t// docs/sweeps.md begins\n")
	body, _, _ = strings.Cut(body, "\t// docs/sweeps.md ends\n")
	var code []string
	for _, line := range strings.SplitAfter(body, "\n") {
		code = append(code, strings.TrimPrefix(line, "\t"))
	}
	if got := strings.Join(code, ""); got != block {
		t.Errorf("docs/sweeps.md's sweep from Go is not docSweep's code:\n--- guide\n%s--- docSweep\n%s", block, got)
	}
}

// TestDocSweepReportsTheFirstRound runs the guide's code on the emulator,
// on the real clock, for a session that expired ten minutes ago: its
// first round reports it (issue 28, stumble 10: without Since the first
// round reported nothing), and the test stops it there.
func TestDocSweepReportsTheFirstRound(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e := emulator.StartForTest(t)
	if err := e.Admin.CreateTable(ctx, "sessions"); err != nil {
		t.Fatal(err)
	}
	raw := e.Client.Open("sessions")
	families := map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), time.Hour)}
	tool, err := policy.New(e.Admin, raw, "sessions", families, policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tool.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	m := bigtable.NewMutation()
	m.Set("sess", "token", bigtable.Time(time.Now().Add(-10*time.Minute)), []byte("abc")) // its expiry
	if err := raw.Apply(ctx, "alice", m); err != nil {
		t.Fatal(err)
	}

	// The checkpoint, sweep.json, in a directory of the test's own.
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := os.Chdir(wd); err != nil {
			t.Error(err)
		}
	}()
	// The guide logs each event: the log stops the sweep at the first.
	logged := &stopAt{want: "session alice expired at ", stop: cancel}
	log.SetOutput(logged)
	defer log.SetOutput(os.Stderr)

	err = docSweep(ctx, e.Admin, e.Client)
	if !errors.Is(err, context.Canceled) || !logged.seen() {
		t.Fatalf("the sweep ended with %v, logging %q; want it stopped after reporting alice's session", err, logged.String())
	}
	if _, err := os.Stat(filepath.Join(".", "sweep.json")); err != nil {
		t.Errorf("no checkpoint: %v", err)
	}
}

// stopAt is a log's output that calls stop once a line holds want.
type stopAt struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	stop func()
	hit  bool
}

func (w *stopAt) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(string(p), w.want) {
		w.hit = true
		w.stop()
	}
	return len(p), nil
}

func (w *stopAt) seen() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.hit
}

func (w *stopAt) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
