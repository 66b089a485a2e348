// Package lease keeps a tool's checkpoint and its lease in one Bigtable
// row, so that a tool run as a service (a sweep's replicas) keeps its
// progress where every replica finds it, and one replica at a time works.
//
// The row KEY of table TABLE holds, in family Family: the record a
// scan.Checkpoint keeps, a generation that every write advances, and the
// lease: its holder, its token and its expiry. Every write is a
// CheckAndMutateRow conditional on the generation the process last read,
// so a process whose view is stale (another saved, or took the lease)
// writes nothing and is told so (ErrStale, ErrLeaseLost).
//
// The operator creates the table, once per instance:
//
//	cbt createtable sweeps families=cp:maxversions=1
//
// See docs/sweeps.md, "Running the sweep as a service", for the lease's
// timing and how it compares with Kubernetes' leader election, Kafka's
// committed offsets and the Dataflow change-stream connector.
package lease

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"cloud.google.com/go/bigtable"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/rules"
)

// Family is the column family of the checkpoint's row.
const Family = "cp"

// The row's columns.
const (
	colRecord = "record" // the scan.Record, as JSON
	colGen    = "gen"    // the generation, in decimal: the condition of every write
	colHolder = "holder" // the lease's holder; absent when none
	colToken  = "token"  // the holder's token, new at each Acquire
	colExpiry = "expiry" // when the lease expires, RFC 3339, by the holder's clock
)

var (
	// ErrNoTable reports a checkpoint table or family that does not
	// exist; the message names the cbt line that creates it.
	ErrNoTable = errors.New("lease: the checkpoint's table or family does not exist")
	// ErrStale reports a Save refused, having written nothing, because
	// the row changed since this process last read it (another process
	// saved), or another process holds the lease.
	ErrStale = errors.New("lease: the checkpoint changed since this process read it")
	// ErrLeaseLost reports a write refused, having written nothing,
	// because this process no longer holds the lease: its local deadline
	// passed or another process took it.
	ErrLeaseLost = errors.New("lease: this process no longer holds the lease")
)

// Options configures a Checkpoint. The zero value names the holder after
// the host and the process, and reads time.Now.
type Options struct {
	// Holder names this process in the row while it holds the lease; ""
	// means the host name, the process id and a random suffix
	// (host/1234/9f3a2c), unique to each Open.
	Holder string
	// Now is the clock; nil means time.Now. A lease's deadline is
	// measured on it, so a clock with a monotonic reading (time.Now's)
	// is immune to steps of the wall clock.
	Now func() time.Time
}

// A Checkpoint is a scan.Checkpoint kept in one Bigtable row, with a lease
// in the same row. It is safe for use by multiple goroutines; its calls
// that reach Bigtable are made one at a time.
type Checkpoint struct {
	data       bigtable.TableAPI
	table, key string
	holder     string
	now        func() time.Time

	op sync.Mutex // held by every call that reaches Bigtable

	mu       sync.Mutex // guards the fields below, never held during a call
	gen      string     // the generation last read or written; "" for no row
	seen     leaseState // the lease as last read or written
	token    string     // this process's token while it believes it holds the lease
	d        time.Duration
	renewed  time.Time // when the last successful Acquire or Renew started
	deadline time.Time // after it, this process does not hold the lease
}

// leaseState is the lease as the row records it.
type leaseState struct {
	holder, token string
	expiry        time.Time
}

// Open returns the checkpoint kept in row key of table, opened as data on
// a data client. It checks that the table and its family Family exist:
// with admin (which may be nil) by the table's schema, otherwise by a read
// of the row, which finds a missing table but not a missing family (the
// first write then fails). A missing one is refused with ErrNoTable, the
// message naming the cbt line that creates it; nil data with
// ttl.ErrNilArgument, an empty table or key with ttl.ErrInvalidOption.
func Open(ctx context.Context, admin *bigtable.AdminClient, data bigtable.TableAPI, table, key string, opts Options) (*Checkpoint, error) {
	if data == nil || rules.IsNilPointer(data) {
		return nil, fmt.Errorf("%w: lease.Open: nil table", ttl.ErrNilArgument)
	}
	if table == "" || key == "" {
		return nil, fmt.Errorf("%w: lease.Open: table %q, row %q: want both named (bigtable:TABLE/KEY)", ttl.ErrInvalidOption, table, key)
	}
	c := &Checkpoint{data: data, table: table, key: key, holder: opts.Holder, now: opts.Now}
	if c.now == nil {
		c.now = time.Now
	}
	if c.holder == "" {
		c.holder = defaultHolder()
	}
	if err := c.check(ctx, admin); err != nil {
		return nil, err
	}
	return c, nil
}

// defaultHolder returns host/pid/suffix, the suffix six random hex digits.
func defaultHolder() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), random(3))
}

// random returns n random bytes in hex.
func random(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// check refuses a missing table or family.
func (c *Checkpoint) check(ctx context.Context, admin *bigtable.AdminClient) error {
	if admin != nil {
		info, err := admin.TableInfo(ctx, c.table)
		if status.Code(err) == codes.NotFound {
			return c.missing("table", err)
		}
		if err != nil {
			return fmt.Errorf("lease: reading the schema of table %q: %w", c.table, err)
		}
		for _, f := range info.FamilyInfos {
			if f.Name == Family {
				return nil
			}
		}
		return c.missing("family", nil)
	}
	_, err := c.data.ReadRow(ctx, c.key, bigtable.RowFilter(bigtable.ChainFilters(bigtable.FamilyFilter(Family), bigtable.StripValueFilter())))
	if status.Code(err) == codes.NotFound {
		return c.missing("table", err)
	}
	if err != nil {
		return fmt.Errorf("lease: reading row %q of table %q: %w", c.key, c.table, err)
	}
	return nil
}

// missing returns the refusal of a missing table or family, what names
// what is missing; err, when not nil, is the server's.
func (c *Checkpoint) missing(what string, err error) error {
	e := fmt.Errorf("%w: table %q has no family %q; create it: cbt createtable %s families=%s:maxversions=1",
		ErrNoTable, c.table, Family, c.table, Family)
	if what == "table" {
		e = fmt.Errorf("%w: table %q does not exist; create it: cbt createtable %s families=%s:maxversions=1",
			ErrNoTable, c.table, c.table, Family)
	}
	if err != nil {
		return fmt.Errorf("%w (%w)", e, err)
	}
	return e
}

// String names the row: bigtable:TABLE/KEY, as the command takes it.
func (c *Checkpoint) String() string { return "bigtable:" + c.table + "/" + c.key }

// HolderName returns the name this process writes in the row while it
// holds the lease (Options.Holder).
func (c *Checkpoint) HolderName() string { return c.holder }
