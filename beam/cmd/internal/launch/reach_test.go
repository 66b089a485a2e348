package launch

import (
	"context"
	"flag"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/cellttl/ttl/beam/pipeline"
)

// TestReach is issue 21's first finding for the Beam jobs: with
// BIGTABLE_EMULATOR_HOST at a port where nothing listens, a job fails
// before it is built, within -connect-timeout, naming the address and
// where it came from.
func TestReach(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	t.Setenv("BIGTABLE_EMULATOR_HOST", addr)
	began := time.Now()
	err = Reach(context.Background(), pipeline.Table{Project: "p", Instance: "i", Table: "t"}, 300*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "cannot reach Bigtable: the emulator at BIGTABLE_EMULATOR_HOST="+addr) {
		t.Fatalf("Reach = %v, want it to name %s", err, addr)
	}
	if d := time.Since(began); d > 20*time.Second {
		t.Errorf("Reach took %v, bounded by -connect-timeout", d)
	}
}

// TestServerCloud names the project and instance, and the flags that
// give them, when no emulator is set.
func TestServerCloud(t *testing.T) {
	t.Setenv("BIGTABLE_EMULATOR_HOST", "")
	got := server(pipeline.Table{Project: "p", Instance: "i", Table: "t"})
	if want := `Cloud Bigtable, project "p" instance "i" (-bigtable-project or -project, -instance)`; got != want {
		t.Errorf("server = %q, want %q", got, want)
	}
}

// TestNegativeDurations refuses a negative duration flag, naming it.
func TestNegativeDurations(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Duration("skew", 0, "")
	fs.Duration("element_processing_timeout", -1, "Beam's: not checked")
	fs.String("name", "", "")
	if err := fs.Parse([]string{"-skew", "1s"}); err != nil {
		t.Fatal(err)
	}
	if err := negativeDurations(fs); err != nil {
		t.Errorf("1s: %v", err)
	}
	if err := fs.Parse([]string{"-skew", "-1s"}); err != nil {
		t.Fatal(err)
	}
	if err := negativeDurations(fs); err == nil || err.Error() != "-skew -1s: a duration cannot be negative" {
		t.Errorf("-1s: %v", err)
	}
}
