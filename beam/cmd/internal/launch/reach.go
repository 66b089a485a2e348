package launch

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/beam/pipeline"
)

// DefaultConnectTimeout bounds a job's first request to Bigtable by
// default.
const DefaultConnectTimeout = 10 * time.Second

// ErrUnreachable reports a Bigtable server that did not answer the first
// request within -connect-timeout, or refused the connection.
var ErrUnreachable = errors.New("cannot reach Bigtable")

// ErrNegative reports a negative duration flag.
var ErrNegative = errors.New("a duration cannot be negative")

// Reach asks the server for the table, within timeout (0: no limit),
// before a job is built, so that a wrong address fails fast and names the
// server and where its address came from. It returns nil once the server
// answers, even that the table does not exist (the job says so itself).
func Reach(ctx context.Context, t pipeline.Table, timeout time.Duration) error {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	where := server(t)
	admin, err := bigtable.NewAdminClient(ctx, t.Project, t.Instance)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrUnreachable, where, err)
	}
	defer admin.Close()
	// The client retries a refused connection until the deadline; any
	// other answer, a missing table or a refusal, is the job's to report.
	if _, err := admin.TableInfo(ctx, t.Table); err != nil && ctx.Err() != nil {
		return fmt.Errorf("%w: %s did not answer within -connect-timeout %v", ErrUnreachable, where, timeout)
	}
	return nil
}

// server says which Bigtable the job talks to and where that came from:
// the emulator at BIGTABLE_EMULATOR_HOST when it is set, otherwise Cloud
// Bigtable by the project and instance the flags give.
func server(t pipeline.Table) string {
	if host := os.Getenv("BIGTABLE_EMULATOR_HOST"); host != "" {
		return "the emulator at BIGTABLE_EMULATOR_HOST=" + host
	}
	return fmt.Sprintf("Cloud Bigtable, project %q instance %q (-bigtable-project or -project, -instance)", t.Project, t.Instance)
}

// ownDurations are the duration flags of this module's commands. Beam's
// own flags are Beam's to check: some default to -1 for "none".
var ownDurations = map[string]bool{"connect-timeout": true, "skew": true, "margin": true}

// negativeDurations refuses a negative value of any of the commands'
// duration flags in fs, naming the flag.
func negativeDurations(fs *flag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		g, ok := f.Value.(flag.Getter)
		if !ok || err != nil || !ownDurations[f.Name] {
			return
		}
		if d, ok := g.Get().(time.Duration); ok && d < 0 {
			err = fmt.Errorf("-%s %v: %w", f.Name, d, ErrNegative)
		}
	})
	return err
}
