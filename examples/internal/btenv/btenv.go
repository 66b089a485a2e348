// Package btenv connects the cellttl example programs to Bigtable.
//
// By default an example runs on an in-process bttest emulator that lives
// as long as the program, so it needs nothing but Go. With
// BIGTABLE_EMULATOR_HOST set it uses that emulator instead, and with
// -project and -instance a real Cloud Bigtable instance, authenticated by
// Application Default Credentials.
package btenv

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"cloud.google.com/go/bigtable"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
)

// Target says where an example runs. The zero value is an in-process
// emulator. BIGTABLE_EMULATOR_HOST, when set, wins over both: the Bigtable
// clients always connect to the emulator it names, and Project and
// Instance then only name the emulated instance.
type Target struct {
	Project  string // Cloud project; with Instance, a real instance
	Instance string // Bigtable instance in Project
}

// RegisterFlags registers -project and -instance on fs (a program's
// flag.CommandLine) and returns the Target they fill in once fs is parsed.
func RegisterFlags(fs *flag.FlagSet) *Target {
	var t Target
	fs.StringVar(&t.Project, "project", "", "Cloud project of a real Bigtable instance (with -instance)")
	fs.StringVar(&t.Instance, "instance", "", "real Bigtable instance to run on, using Application Default Credentials (with -project)")
	return &t
}

// An Env is an example's connection to Bigtable and the table it works in.
type Env struct {
	Client *bigtable.Client      // data client, with metrics export off
	Admin  *bigtable.AdminClient // table admin client
	Table  bigtable.TableAPI     // the example's table, opened on Client
	Name   string                // the table's name: "cellttl-example-" + the example's name
	Where  string                // where it runs, for the example's output

	// Emulated is true on an emulator, whose GC runs every 0.5–1.5 s on
	// the real clock; on Cloud Bigtable GC runs when it runs, up to a
	// week later.
	Emulated bool

	closers []func() error // run in reverse order by Close
}

// Open connects to the target and opens the example's table, creating it
// if it does not exist: each managed family with its strategy's GCPolicy,
// each of others with no GC policy.
//
// An existing table is used as it is when it has exactly these families
// with these policies; a family it lacks is added and a managed family's
// policy is set. A table with any other family belongs to someone else:
// Open refuses it and changes nothing.
func Open(ctx context.Context, t Target, example string, families map[string]ttl.Strategy, others ...string) (_ *Env, err error) {
	e := &Env{Name: "cellttl-example-" + example}
	defer func() {
		if err != nil {
			e.Close()
		}
	}()
	if err := e.connect(ctx, t); err != nil {
		return nil, err
	}
	if err := e.ensureTable(ctx, families, others); err != nil {
		return nil, fmt.Errorf("table %s on %s: %w", e.Name, e.Where, err)
	}
	e.Table = e.Client.Open(e.Name)
	return e, nil
}

// Begin is how an example starts: it opens the example's table on target,
// as Open does, and returns the context the example works in, which gives
// it a minute, so that a Bigtable that does not answer ends the example
// rather than hangs it. env.Close ends the context last.
func Begin(target Target, example string, families map[string]ttl.Strategy) (context.Context, *Env, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	env, err := Open(ctx, target, example, families)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	// Close runs the closers in reverse order: the first runs last.
	env.closers = append([]func() error{func() error { cancel(); return nil }}, env.closers...)
	return ctx, env, nil
}

// connect makes the clients, starting an in-process emulator when the
// target names no other.
func (e *Env) connect(ctx context.Context, t Target) error {
	if (t.Project == "") != (t.Instance == "") {
		return errors.New("give both -project and -instance, or neither")
	}
	project, instance := t.Project, t.Instance
	switch host := os.Getenv("BIGTABLE_EMULATOR_HOST"); {
	case host != "":
		// The clients find it in the environment themselves.
		e.Where, e.Emulated = "the emulator at "+host, true
	case project != "":
		e.Where = "projects/" + project + "/instances/" + instance
	default:
		emu, err := emulator.Start()
		if err != nil {
			return fmt.Errorf("starting the in-process emulator: %w", err)
		}
		e.closers = append(e.closers, emu.Close)
		e.Where, e.Emulated = "an in-process bttest emulator", true
		e.Admin, e.Client = emu.Admin, emu.Client
		return nil
	}
	if project == "" {
		project, instance = "example-project", "example-instance"
	}

	var err error
	e.Admin, err = bigtable.NewAdminClient(ctx, project, instance)
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", e.Where, err)
	}
	e.closers = append(e.closers, e.Admin.Close)
	e.Client, err = bigtable.NewClientWithConfig(ctx, project, instance,
		bigtable.ClientConfig{MetricsProvider: bigtable.NoopMetricsProvider{}})
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", e.Where, err)
	}
	e.closers = append(e.closers, e.Client.Close)
	return nil
}

// ensureTable creates the table and its families, or checks that an
// existing one is the example's own and completes it. It adds families and
// sets policies one call each, not as ttl.EnsureFamilies creates a new
// table (in one call): the in-process emulator starts its GC loop only
// after a family is modified, and the examples show GC at work.
func (e *Env) ensureTable(ctx context.Context, families map[string]ttl.Strategy, others []string) error {
	want := make(map[string]bigtable.GCPolicy, len(families)+len(others))
	for name, s := range families {
		want[name] = s.GCPolicy()
	}
	for _, name := range others {
		want[name] = nil
	}

	have := map[string]string{} // family name → GC policy
	info, err := e.Admin.TableInfo(ctx, e.Name)
	switch {
	case status.Code(err) == codes.NotFound:
		if err := e.Admin.CreateTable(ctx, e.Name); err != nil {
			return err
		}
	case err != nil:
		return err
	default:
		for _, f := range info.FamilyInfos {
			if _, ok := want[f.Name]; !ok {
				return fmt.Errorf("exists with family %q, which the example does not use; not touching it", f.Name)
			}
			have[f.Name] = f.GCPolicy
		}
	}

	names := make([]string, 0, len(want))
	for name := range want {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		policy, exists := have[name]
		if !exists {
			if err := e.Admin.CreateColumnFamily(ctx, e.Name, name); err != nil {
				return err
			}
		}
		if p := want[name]; p != nil && (!exists || policy != p.String()) {
			if err := e.Admin.SetGCPolicy(ctx, e.Name, name, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// DeleteRows deletes the given rows, so that a run on an emulator or an
// instance that an earlier run wrote to starts from the same state.
func (e *Env) DeleteRows(ctx context.Context, rows ...string) error {
	muts := make([]*bigtable.Mutation, len(rows))
	for i := range muts {
		muts[i] = bigtable.NewMutation()
		muts[i].DeleteRow()
	}
	errs, err := e.Table.ApplyBulk(ctx, rows, muts)
	if err != nil {
		return err
	}
	return errors.Join(errs...)
}

// DeleteTable deletes the example's table at the end of a run that
// created its families itself (Open refuses a table with a family it was
// not given, so the next run needs it gone): deferred as
// defer env.DeleteTable(ctx, out, &err), it joins a failure into *err
// and, when the run succeeded, says on out that the table is gone.
func (e *Env) DeleteTable(ctx context.Context, out io.Writer, err *error) {
	if derr := e.Admin.DeleteTable(ctx, e.Name); derr != nil {
		*err = errors.Join(*err, fmt.Errorf("deleting table %s: %w", e.Name, derr))
		return
	}
	if *err == nil {
		fmt.Fprintf(out, "\nTable %s deleted.\n", e.Name)
	}
}

// Tomorrow is the next midnight UTC: the first day of an example's
// simulated clock, so that every cell's timestamp, its expiry, is in the
// future of the real clock, by which the emulator's garbage collection
// judges them.
func Tomorrow() time.Time { return time.Now().UTC().Truncate(24 * time.Hour).Add(24 * time.Hour) }

// Close closes the clients and stops the in-process emulator, if any. It
// returns the first error.
func (e *Env) Close() error {
	var first error
	for i := len(e.closers) - 1; i >= 0; i-- {
		if err := e.closers[i](); err != nil && first == nil {
			first = err
		}
	}
	e.closers = nil
	return first
}
