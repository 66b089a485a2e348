package ttl

import (
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/internal/rules"
)

// Errors returned by this package. Each is wrapped with the family, column,
// lifetime or value at fault; test for them with [errors.Is].
var (
	// ErrExpired reports a write whose expiry, rounded down to the
	// millisecond, is not after now (or not after now plus the table's read
	// margin): the cell would be born expired.
	ErrExpired = errors.New("ttl: cell would be born expired")

	// ErrOutOfRange reports a timestamp outside what Bigtable accepts,
	// 0 through [MaxTimestamp]: an expiry before 1970 or after the year
	// 294,247 (whose last millisecond is kept for Forever), a sequence
	// number that is negative or too large.
	ErrOutOfRange = errors.New("ttl: timestamp out of range")

	// ErrLifetime reports a lifetime the family cannot honour: Version in a
	// time-based family, For or Until in a sequence-number family, Default
	// under OneSecond, anything but Default in a family without a strategy.
	ErrLifetime = errors.New("ttl: lifetime not supported by the family")

	// ErrInvalidStrategy reports a strategy or family that cannot work: a
	// nil strategy, DefaultExpiration with a non-positive or sub-millisecond
	// default, SequenceNumbers with a non-positive count, a family name
	// Bigtable would refuse, a strategy from outside this package.
	ErrInvalidStrategy error = rules.ErrInvalidStrategy

	// ErrInvalidOption reports an option that cannot work: a nil clock, a
	// negative read margin, a bad OtherFamilies name, a WithSchedule that
	// names a family it cannot schedule or the table itself, a
	// bigtable.RowFilter that would replace the expiry filter, a nil read
	// option.
	ErrInvalidOption error = rules.ErrInvalidOption

	// ErrUnknownFamily reports a write to a family the table does not know:
	// an empty name, or, when the table's families are declared with
	// OtherFamilies, a family that is neither managed nor declared; and a
	// counter read (ReadCounter, SumCounter) of a family that is neither.
	ErrUnknownFamily error = rules.ErrUnknownFamily

	// ErrInvalidMutation reports a mutation Bigtable cannot take: nil, with
	// nothing in it, a conditional one nested in another or sent in bulk.
	ErrInvalidMutation = errors.New("ttl: invalid mutation")

	// ErrReservedColumn reports a column in the range this package keeps for
	// write-time companion cells (qualifiers starting with "\xff\xff") in a
	// managed family of a table that records write times.
	ErrReservedColumn = errors.New("ttl: reserved column qualifier")

	// ErrServerTimestamp reports a read-modify-write in a family where a
	// server-assigned timestamp breaks the strategy: under OneSecond the
	// cell would expire at once, under SequenceNumbers it would not be a
	// sequence number.
	ErrServerTimestamp = errors.New("ttl: server timestamps are unsafe in this family")

	// ErrNilArgument reports a nil argument that the call cannot do
	// without: a context, a table, a row set, a callback.
	ErrNilArgument error = rules.ErrNilArgument

	// ErrConflict reports a Touch that wrote nothing because the cell
	// changed between its read and its write: replaced, deleted, rewritten
	// or outranked by a newer cell. The newer state stands.
	ErrConflict = errors.New("ttl: the cell changed between the read and the write")

	// ErrCounter reports a write or read that does not fit the family's
	// kind of cell: an Add to a family that is not a counter family, a
	// Set, Replace, Touch or read-modify-write in a counter family, a
	// counter read of a plain family, or a counter cell that does not
	// fall on the window it is read with.
	ErrCounter = errors.New("ttl: counter and family do not match")

	// ErrRenewal reports KeepAlive renewals that failed (for a reason other
	// than a newer write, which is not an error): the rows were read and
	// delivered, but the cells named may expire idle after their previous
	// renewal rather than after this read.
	ErrRenewal = errors.New("ttl: keep-alive renewal failed")

	// ErrTransactionNotAllowed reports a call that needs a single-row
	// transaction (CheckAndMutateRow or ReadModifyWriteRow: Touch,
	// KeepAlive's renewals, a conditional mutation, a read-modify-write, a
	// move's rewrite) refused by the server because the client's app
	// profile routes to several clusters. The message names the call, the
	// app profile (when given with WithAppProfile) and the alternatives.
	// It wraps the server's status too.
	ErrTransactionNotAllowed = errors.New("ttl: single-row transaction not allowed by the app profile")

	// ErrSchedule reports a write call whose schedule entries
	// (WithSchedule) could not be written: the call wrote none of its
	// data. It wraps the schedule table's error too.
	ErrSchedule = errors.New("ttl: schedule entries not written")
)

// MaxTimestamp is the largest timestamp Bigtable accepts: math.MaxInt64
// microseconds rounded down to a whole millisecond, in the year 294,247.
// [Forever] cells are stored at or just below it. (It is the rules'
// MaxTimestamp, written out so that documentation shows its value.)
const MaxTimestamp bigtable.Timestamp = 9_223_372_036_854_775_000

// A Lifetime says how long one written cell lives. Make one with [For],
// [Until] or [Version], or use [Default] or [Forever]. The zero value is
// [Default].
type Lifetime struct {
	// 16 bytes; a recipe's run lays these fields out again beside its
	// family and its count, in 32 (see run in mutation.go).
	kind lifeKind
	nsec int32 // Until: the nanoseconds of the instant within its second
	n    int64 // For: the duration; Until: the instant in Unix seconds; Version: the sequence number
}

// until returns the instant of an Until lifetime.
func (l Lifetime) until() time.Time { return time.Unix(l.n, int64(l.nsec)) }

type lifeKind uint8

const (
	lifeDefault lifeKind = iota
	lifeFor
	lifeUntil
	lifeVersion
	lifeForever
)

// Default is the family's own lifetime. Under DefaultExpiration(d) it is
// For(d), and the cell's timestamp is the write time itself. In a family
// without a strategy it is the only lifetime accepted: the cell is written
// at the table clock's now and kept as the family's GC policy says.
// OneSecond and SequenceNumbers have no default and refuse it.
var Default Lifetime

// Forever is a lifetime that never ends, for a cell that must outlive the
// rest of its family. OneSecond stores it at [MaxTimestamp],
// DefaultExpiration(d) at MaxTimestamp − d; reads always return it and GC
// never reaches it. SequenceNumbers refuses it: there, every cell lives
// until n newer versions replace it.
var Forever = Lifetime{kind: lifeForever}

// For returns the lifetime of a cell that expires d after it is written:
// its expiry is the table clock's now plus d. A d that is not positive
// makes the write fail with ErrExpired.
func For(d time.Duration) Lifetime { return Lifetime{kind: lifeFor, n: int64(d)} }

// Until returns the lifetime of a cell that expires at t: it is returned by
// reads before t and never from t on. A t that is not after now makes the
// write fail with ErrExpired.
func Until(t time.Time) Lifetime {
	return Lifetime{kind: lifeUntil, n: t.Unix(), nsec: int32(t.Nanosecond())}
}

// Version returns the lifetime of the cell that is version n of its column
// under SequenceNumbers: it lives until the family holds the configured
// number of newer versions of the column. n must be 0 through
// [MaxTimestamp]/1000.
func Version(n int64) Lifetime { return Lifetime{kind: lifeVersion, n: n} }

// String returns the lifetime as the Go expression that makes it, such as
// "For(1h0m0s)" or "Version(7)".
func (l Lifetime) String() string {
	switch l.kind {
	case lifeFor:
		return fmt.Sprintf("For(%v)", time.Duration(l.n))
	case lifeUntil:
		return fmt.Sprintf("Until(%v)", l.until().UTC().Format(time.RFC3339Nano))
	case lifeVersion:
		return fmt.Sprintf("Version(%d)", l.n)
	case lifeForever:
		return "Forever"
	default:
		return "Default"
	}
}

// A Strategy maps a cell's lifetime to the timestamp it is written with, and
// back to the read filter that hides it from its expiry on. Each strategy
// relies on a garbage-collection policy on its column family, which
// physically removes what the filter already hides.
//
// The strategies are [OneSecond], [DefaultExpiration] and [SequenceNumbers].
// They are values: safe for simultaneous use by multiple goroutines, and
// equal when made with equal arguments.
//
// Time is a parameter: the methods take now and never read a clock, so the
// same inputs always give the same result. A [Table] reads its clock once
// per call and passes that instant to every cell and filter of the call.
//
// Costs and rationale: docs/api-notes.md#ttlstrategy.
type Strategy interface {
	// Timestamp returns the timestamp to write a cell with so that it lives
	// for life when written at now. The result is a multiple of 1000
	// (Bigtable's millisecond granularity) from 0 through MaxTimestamp;
	// expiries are rounded down, so a cell may be hidden up to 1ms before
	// its requested expiry and never after it. A lifetime the strategy
	// cannot honour returns an error wrapping ErrExpired, ErrOutOfRange,
	// ErrLifetime or, for an invalid strategy, ErrInvalidStrategy.
	Timestamp(now time.Time, life Lifetime) (bigtable.Timestamp, error)

	// Filter returns a filter that passes exactly the cells of the
	// strategy's family that are live at now: a cell is hidden from its
	// expiry on. It selects no family; a Table chains it after its own
	// family selection. An invalid strategy's filter passes nothing.
	Filter(now time.Time) bigtable.Filter

	// GCPolicy returns the garbage-collection policy the strategy's family
	// must have. Under it GC only ever removes cells the filter already
	// hides. An invalid strategy returns bigtable.NoGcPolicy(), which
	// removes nothing.
	GCPolicy() bigtable.GCPolicy

	// ExpiresAt returns the expiry of a cell stored with timestamp ts: the
	// instant from which Filter hides it. It reports false for a cell that
	// does not expire by time: a Forever cell, or any cell under
	// SequenceNumbers.
	ExpiresAt(ts bigtable.Timestamp) (time.Time, bool)

	// Versions returns how many versions of each column the strategy keeps
	// live, n for SequenceNumbers(n), and false for a strategy under which
	// cells expire by time.
	Versions() (n int, ok bool)

	// String returns the strategy as the Go expression that makes it, such
	// as "DefaultExpiration(48h0m0s)".
	String() string

	// valid returns nil, or an error wrapping ErrInvalidStrategy that says
	// what is wrong with the strategy's arguments.
	valid() error

	// rule returns the rule behind the timestamps, which the rest of the
	// module reads, checked, through each strategy's exported Rule
	// (rules.Of).
	rule() rules.Strategy

	// supersedes returns the timestamps of its column that a cell written
	// with timestamp ts makes obsolete, to be deleted in the same
	// mutation, and false when it makes none obsolete.
	supersedes(ts bigtable.Timestamp) (rules.Range, bool)

	// readModifyWrite reports whether a cell stamped with the server's
	// clock at now (as read-modify-write stamps it) lives as the family
	// intends, and the timestamps of the family's cells that reads treat
	// as expired at now + margin, which the server must not build on.
	readModifyWrite(now time.Time, margin time.Duration) (ok bool, expired []rules.Range)
}

// timestamp implements Strategy.Timestamp for a time rule; name returns
// the strategy's name, for messages. (A func, not a fmt.Stringer:
// converting a DefaultExpiration to an interface would allocate on every
// call.)
func timestamp(r rules.Time, now time.Time, life Lifetime, name func() string) (bigtable.Timestamp, error) {
	if ts, ok := quickTimestamp(r, now, life); ok {
		return ts, nil
	}
	return longTimestamp(r, now, life, name)
}

// longTimestamp is timestamp worked out with time.Time, for every case.
func longTimestamp(r rules.Time, now time.Time, life Lifetime, name func() string) (bigtable.Timestamp, error) {
	var expiry time.Time
	switch life.kind {
	case lifeFor:
		expiry = now.Add(time.Duration(life.n))
	case lifeUntil:
		expiry = life.until()
	case lifeDefault:
		if r.Offset == 0 {
			return 0, fmt.Errorf("%w: %v has no default lifetime; use For or Until", ErrLifetime, name())
		}
		expiry = now.Add(r.Offset)
	case lifeForever:
		return r.Forever(), nil
	default:
		return 0, fmt.Errorf("%w: %v under %v, which expires cells by time; use For or Until", ErrLifetime, life, name())
	}
	if rounded := expiry.Truncate(time.Millisecond); !rounded.After(now) {
		return 0, fmt.Errorf("%w: %v under %v expires at %v, not after now (%v)",
			ErrExpired, life, name(), rounded.UTC().Format(time.RFC3339Nano), now.UTC().Format(time.RFC3339Nano))
	}
	ms, inRange := rules.FloorMillis(expiry)
	ms -= int64(r.Offset / time.Millisecond)
	// The last millisecond is Forever's: a finite expiry there would read
	// back as never expiring.
	if inRange != 0 || ms < 0 || bigtable.Timestamp(ms*1000) >= r.Forever() {
		return 0, fmt.Errorf("%w: %v under %v expires at %v, which needs a timestamp outside 1970 to the year 294,247 (its last millisecond is Forever's)",
			ErrOutOfRange, life, name(), expiry.UTC().Format(time.RFC3339Nano))
	}
	return bigtable.Timestamp(ms * 1000), nil
}

// quickSec bounds the instants quickTimestamp takes, in seconds since the
// epoch (about the year 36,800): far below rules.MaxMillis, and far enough
// that adding a Duration (at most 292 years) cannot overflow.
const quickSec = 1 << 40

// quickTimestamp is timestamp for the common write, a For, Until or
// Default lifetime at a now and an expiry from 1970 on and well within
// Bigtable's range, in integer arithmetic on seconds and nanoseconds
// instead of time.Time's (Add, Truncate, After and Unix cost ten times
// as much). It reports false for everything else, errors included, which
// longTimestamp works out; the fuzz targets check both against exact
// arithmetic, and TestQuickTimestamp the one against the other.
func quickTimestamp(r rules.Time, now time.Time, life Lifetime) (bigtable.Timestamp, bool) {
	sec, nsec := now.Unix(), int64(now.Nanosecond())
	if sec < 0 || sec >= quickSec {
		return 0, false
	}
	var esec, ensec int64 // the expiry
	switch d := life.n; life.kind {
	case lifeDefault:
		d = int64(r.Offset)
		fallthrough
	case lifeFor:
		if d <= 0 {
			return 0, false
		}
		esec, ensec = sec+d/1e9, nsec+d%1e9
		if ensec >= 1e9 {
			esec, ensec = esec+1, ensec-1e9
		}
	case lifeUntil:
		esec, ensec = life.n, int64(life.nsec)
		if esec < 0 || esec >= quickSec || ensec < 0 || ensec >= 1e9 {
			return 0, false
		}
	default:
		return 0, false
	}
	ms := esec*1000 + ensec/1e6 // the expiry rounded down to the millisecond
	if s, ns := ms/1000, ms%1000*1e6; s < sec || s == sec && ns <= nsec {
		return 0, false // born expired
	}
	ms -= int64(r.Offset / time.Millisecond)
	if ms < 0 {
		return 0, false // before 1970
	}
	return bigtable.Timestamp(ms * 1000), true
}

// checkedRule returns the rule of a valid strategy, or the error that
// makes it invalid: each strategy's Rule, which package rules reads
// through rules.Of (a rules.Ruler), since it imports nothing of this one.
func checkedRule(s Strategy) (rules.Strategy, error) {
	if err := s.valid(); err != nil {
		return rules.Strategy{}, err
	}
	return s.rule(), nil
}

// withGrace returns the name of a strategy with grace g: name itself
// without one, wrapped in the expression that adds g with one.
func withGrace(name string, g time.Duration) string {
	if g == 0 {
		return name
	}
	return fmt.Sprintf("Grace(%s, %v)", name, g)
}

// checkGrace returns nil, or the error that says why grace g of the
// strategy named by name is invalid. It takes the strategy's String, not
// the strategy: a strategy made an interface value would be allocated on
// every Timestamp, which checks its grace first.
func checkGrace(g time.Duration, name func() string) error {
	if g < 0 || g%time.Second != 0 {
		return fmt.Errorf("%w: %v: a grace must be a whole number of seconds, not negative (Bigtable reports GC ages in whole seconds)", ErrInvalidStrategy, name())
	}
	return nil
}
