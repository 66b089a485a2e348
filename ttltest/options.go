package ttltest

import (
	"fmt"
	"regexp"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/rules"
)

// DefaultTable is the name of the table an Env creates unless
// [WithTableName] names another.
const DefaultTable = "ttltest"

// DefaultGCLag is how long after a cell becomes collectable
// [Env.FastForward] leaves it stored unless [WithGCLag] says otherwise:
// a week, the delay Bigtable's documentation gives as the longest its
// garbage collection takes in production.
const DefaultGCLag = 7 * 24 * time.Hour

// DefaultStart is the instant an Env's clock reads when it starts unless
// [WithStart] says otherwise: midnight UTC on 1 January 2100. It is fixed,
// so that a test's instants (and the windows of its counters) are the
// same in every run, and far ahead of the real clock, so that code under
// test that reads time.Now instead of the clock it was given writes cells
// that are plainly wrong at once, and so that the emulator's own GC,
// which runs on the real clock, never reaches a cell stamped by the
// Env's clock (see the package doc).
var DefaultStart time.Time = time.Date(2100, time.January, 1, 0, 0, 0, 0, time.UTC)

// An Option configures an Env; pass it to [New] or [Start].
type Option interface {
	apply(*config) error
}

// config is what the options set.
type config struct {
	name      string
	start     time.Time
	lag       time.Duration
	tableOpts []ttl.Option
	others    map[string]bigtable.GCPolicy // WithFamily, by name
	order     []string                     // WithFamily names in the order given
}

func defaults() config {
	return config{name: DefaultTable, start: DefaultStart, lag: DefaultGCLag, others: map[string]bigtable.GCPolicy{}}
}

type optionFunc func(*config) error

func (f optionFunc) apply(c *config) error { return f(c) }

// WithTableOptions passes opts to ttl.NewTable when the Env makes its
// Table: ttl.OtherFamilies, ttl.WithReadMargin, ttl.RecordWriteTime and
// the like. The Env's clock is given last, so a ttl.WithClock among opts
// has no effect: the Table always reads the Env's clock. Given more than
// once, the options of every call are passed, in order.
func WithTableOptions(opts ...ttl.Option) Option {
	return optionFunc(func(c *config) error {
		for i, o := range opts {
			if o == nil {
				return fmt.Errorf("%w: ttltest.WithTableOptions: option %d is nil", ttl.ErrInvalidOption, i)
			}
		}
		c.tableOpts = append(c.tableOpts, opts...)
		return nil
	})
}

// WithFamily adds a family without a strategy to the table, created with
// GC policy p (nil for no GC), as a table's other families are: the
// Env's garbage collection applies p to it like any other policy. The
// Env's Table has it declared with ttl.OtherFamilies (declaring it again
// with WithTableOptions is harmless). A name Bigtable would refuse, given twice,
// or that has a strategy is refused with ttl.ErrInvalidOption.
func WithFamily(name string, p bigtable.GCPolicy) Option {
	return optionFunc(func(c *config) error {
		if err := rules.CheckFamilyName(name); err != nil {
			return fmt.Errorf("%w: ttltest.WithFamily: %v", ttl.ErrInvalidOption, err)
		}
		if _, dup := c.others[name]; dup {
			return fmt.Errorf("%w: ttltest.WithFamily: family %q is given twice", ttl.ErrInvalidOption, name)
		}
		if p == nil {
			p = bigtable.NoGcPolicy()
		}
		c.others[name] = p
		c.order = append(c.order, name)
		return nil
	})
}

// WithStart starts the Env's clock at t instead of [DefaultStart]. t must
// be a whole millisecond (Bigtable's granularity) from 1970 on. A t near
// or before the real clock lets the emulator's own GC reach the table's
// cells should it ever run (see the package doc).
func WithStart(t time.Time) Option {
	return optionFunc(func(c *config) error {
		if t.Before(time.Unix(0, 0)) || !t.Equal(t.Truncate(time.Millisecond)) {
			return fmt.Errorf("%w: ttltest.WithStart(%v): want a whole millisecond from 1970 on",
				ttl.ErrInvalidOption, t.UTC().Format(time.RFC3339Nano))
		}
		c.start = t
		return nil
	})
}

// WithGCLag sets how long after a cell becomes collectable FastForward
// leaves it stored ([DefaultGCLag] unless set). Zero makes FastForward
// collect at once what GC may collect, as CollectGarbage does; a test
// then no longer sees the expired cells a late GC leaves stored, and can
// no longer catch a reader that forgets the expiry filter. lag must not
// be negative.
func WithGCLag(lag time.Duration) Option {
	return optionFunc(func(c *config) error {
		if lag < 0 {
			return fmt.Errorf("%w: ttltest.WithGCLag(%v): want a duration not negative", ttl.ErrInvalidOption, lag)
		}
		c.lag = lag
		return nil
	})
}

// tableName is what Bigtable accepts as a table ID.
var tableName = regexp.MustCompile(`^[_a-zA-Z0-9][-_.a-zA-Z0-9]{0,49}$`)

// WithTableName names the table name instead of [DefaultTable]. A name
// Bigtable would refuse ([_a-zA-Z0-9][-_.a-zA-Z0-9]*, at most 50
// characters) is refused with ttl.ErrInvalidOption.
func WithTableName(name string) Option {
	return optionFunc(func(c *config) error {
		if !tableName.MatchString(name) {
			return fmt.Errorf("%w: ttltest.WithTableName(%q): want [_a-zA-Z0-9][-_.a-zA-Z0-9]*, at most 50 characters",
				ttl.ErrInvalidOption, name)
		}
		c.name = name
		return nil
	})
}
