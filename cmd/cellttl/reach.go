package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"cloud.google.com/go/bigtable"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/text"
	"github.com/cellttl/ttl/policy"
)

// Reaching the server, and checking the families a command line names
// against the ones the table has: a command's first request, bounded by
// -connect-timeout, so that a wrong address fails fast and says which
// address, and a misspelled family fails with a suggestion.

// defaultConnectTimeout bounds a command's first request by default.
const defaultConnectTimeout = 10 * time.Second

// errUnreachable reports a server that did not answer a command's first
// request in time, or refused the connection.
var errUnreachable = errors.New("cannot reach Bigtable")

// errNotReady reports a step run before the instant it can run at: a
// "not yet", exit status 4.
var errNotReady = errors.New("not yet")

// server says where the command connects and where that came from: the
// emulator at BIGTABLE_EMULATOR_HOST, or Cloud Bigtable by project and
// instance.
func server(c *config) string {
	return text.Server(os.Getenv("BIGTABLE_EMULATOR_HOST"), c.project, c.instance)
}

// tableFamilies is what a command's first request learns of the table.
type tableFamilies struct {
	exists bool
	names  []string // sorted
}

// reach asks the server for the table's families, within
// -connect-timeout (and -timeout): its error names the server and where
// its address came from.
func reach(ctx context.Context, c *config, admin *bigtable.AdminClient) (tableFamilies, error) {
	bound := "-connect-timeout " + c.connectTimeout.String()
	if c.connectTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, c.connectTimeout, errUnreachable)
		defer cancel()
	}
	if err := probe(ctx, c); err != nil {
		return tableFamilies{}, err
	}
	info, err := admin.TableInfo(ctx, c.table)
	switch code := status.Code(err); {
	case err == nil:
	case code == codes.NotFound:
		return tableFamilies{}, nil
	case code == codes.Unavailable || code == codes.DeadlineExceeded || errors.Is(err, context.DeadlineExceeded):
		if !errors.Is(context.Cause(ctx), errUnreachable) && c.timeout > 0 {
			bound = "-timeout " + c.timeout.String()
		}
		if code == codes.Unavailable && ctx.Err() == nil {
			return tableFamilies{}, fmt.Errorf("%w: %s: %v", errUnreachable, server(c), status.Convert(err).Message())
		}
		return tableFamilies{}, fmt.Errorf("%w: %s did not answer within %s", errUnreachable, server(c), bound)
	default:
		return tableFamilies{}, fmt.Errorf("table %q on %s: %w", c.table, server(c), err)
	}
	var names []string
	for _, f := range info.FamilyInfos {
		names = append(names, f.Name)
	}
	if len(names) == 0 {
		names = info.Families
	}
	slices.Sort(names)
	return tableFamilies{exists: true, names: names}, nil
}

// probe dials the emulator's address when BIGTABLE_EMULATOR_HOST names
// one, so that a port where nothing listens fails at once, saying so
// ("connection refused"), where the client would retry the connection
// until -connect-timeout. A dial that ctx ends is left to the request,
// which says which bound ended it.
func probe(ctx context.Context, c *config) error {
	host := os.Getenv("BIGTABLE_EMULATOR_HOST")
	if host == "" {
		return nil
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("%w: %s: %v", errUnreachable, server(c), err)
	}
	conn.Close() // only the connection was wanted
	return nil
}

// clientError is the error of a client that could not be made. Without
// BIGTABLE_EMULATOR_HOST that is the credentials Cloud Bigtable needs:
// it says so, and names the flags and the variable that choose the
// server.
func clientError(c *config, err error) error {
	if os.Getenv("BIGTABLE_EMULATOR_HOST") != "" {
		return err
	}
	return fmt.Errorf("%w: %s: %v\n  give it application default credentials (gcloud auth application-default login, or GOOGLE_APPLICATION_CREDENTIALS=FILE),\n  or set BIGTABLE_EMULATOR_HOST=HOST:PORT to use an emulator (with the same -project and -instance)",
		errUnreachable, server(c), err)
}

// missing returns the families among names that the table does not have.
func (t tableFamilies) missing(names []string) []string {
	var out []string
	for _, n := range names {
		if !slices.Contains(t.names, n) {
			out = append(out, n)
		}
	}
	return out
}

// suggest returns " (did you mean "sess"?)" for a family name within two
// edits of one the table has, and "" otherwise.
func (t tableFamilies) suggest(name string) string {
	if near := text.Nearest(name, t.names, 2); near != "" {
		return fmt.Sprintf(" (did you mean %q?)", near)
	}
	return ""
}

// unknown returns an error wrapping ttl.ErrUnknownFamily that names each
// family among names the table does not have, with a suggestion, or nil
// when it has them all. A table that does not exist is not a family: its
// error wraps policy.ErrTableNotFound, and names the server.
func (t tableFamilies) unknown(c *config, names []string) error {
	if !t.exists {
		return fmt.Errorf("%w: table %q does not exist on %s", policy.ErrTableNotFound, c.table, server(c))
	}
	missing := t.missing(names)
	if len(missing) == 0 {
		return nil
	}
	table := c.table
	parts := make([]string, len(missing))
	for i, n := range missing {
		parts[i] = fmt.Sprintf("%q%s", n, t.suggest(n))
	}
	return fmt.Errorf("%w: table %q has no family %s; its families: %s", ttl.ErrUnknownFamily, table,
		strings.Join(parts, ", "), strings.Join(t.names, ", "))
}
