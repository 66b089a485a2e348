package ttl

import (
	"fmt"
	"reflect"
	"slices"
	"time"

	"cloud.google.com/go/bigtable"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/cellttl/ttl/internal/rules"
)

// An Option configures a [Table]; pass it to [NewTable].
type Option interface {
	apply(*config) error
}

// config is what the options set. Its zero value is the default: the
// clock is time.Now, other families are undeclared, no read margin, no
// write times.
type config struct {
	now        func() time.Time
	others     []string // nil: undeclared; non-nil (maybe empty): declared
	margin     time.Duration
	writeTimes bool
	appProfile string
	metrics    metricsConfig
	schedule   scheduleConfig
}

// metricsConfig is where the table records what it does: a meter
// provider, and the attributes every measurement carries.
type metricsConfig struct {
	mp    metric.MeterProvider
	attrs []attribute.KeyValue
}

// scheduleConfig is the schedule table the table writes entries to
// beside its data, and the families it writes them for.
type scheduleConfig struct {
	set      bool
	tbl      bigtable.TableAPI
	families []string // as named; none: every family that expires by time
}

type optionFunc func(*config) error

func (f optionFunc) apply(c *config) error { return f(c) }

// WithClock makes the table read the time from now instead of time.Now:
// once per Apply, ApplyBulk, read or read-modify-write, for every cell and
// filter of that call. Tests pass a fake clock; services whose machines'
// clocks are not trusted can pass a corrected one. now must be safe for
// simultaneous use by multiple goroutines.
func WithClock(now func() time.Time) Option {
	return optionFunc(func(c *config) error {
		if now == nil {
			return fmt.Errorf("%w: WithClock(nil)", ErrInvalidOption)
		}
		c.now = now
		return nil
	})
}

// OtherFamilies declares the table's families that have no strategy; with
// no names it declares that the managed families are all there is.
//
// Declaring the families makes reads cheap: the read filter then selects
// each family by name with no regular expression, and a table whose
// families all share one strategy needs no family selection at all.
// Without it the table cannot know which other families exist and passes
// them through with a regular expression that Bigtable evaluates for every
// cell. Once declared, writes to undeclared families fail with
// ErrUnknownFamily, and their cells are not returned, but for the case
// docs/api-notes.md#ttlotherfamilies describes.
//
// Given more than once, OtherFamilies declares the names of every call; a
// name in one call twice is refused, in two calls declared once.
func OtherFamilies(names ...string) Option {
	return optionFunc(func(c *config) error {
		if c.others == nil {
			c.others = make([]string, 0, len(names))
		}
		earlier := len(c.others)
		for _, n := range names {
			if err := rules.CheckFamilyName(n); err != nil {
				return fmt.Errorf("%w: OtherFamilies: %v", ErrInvalidOption, err)
			}
			if slices.Contains(c.others[earlier:], n) {
				return fmt.Errorf("%w: OtherFamilies: family %q is named twice", ErrInvalidOption, n)
			}
			if !slices.Contains(c.others[:earlier], n) {
				c.others = append(c.others, n)
			}
		}
		return nil
	})
}

// WithReadMargin makes reads and conditional predicates treat a cell whose
// expiry is within d of now as already expired, and refuses writes of such
// cells with ErrExpired, since they would be born invisible.
//
// A margin keeps a retention promise when a reader's clock may lag the
// writers' by up to d: a cell is hidden by every such reader from its
// expiry on, at the price of hiding it up to d early from a reader whose
// clock is right. It applies to OneSecond and DefaultExpiration families;
// sequence numbers do not depend on time. d must not be negative.
func WithReadMargin(d time.Duration) Option {
	return optionFunc(func(c *config) error {
		if d < 0 {
			return fmt.Errorf("%w: WithReadMargin(%v): the margin must not be negative", ErrInvalidOption, d)
		}
		c.margin = d
		return nil
	})
}

// WithAppProfile names the app profile the table's client was opened with
// (bigtable.ClientConfig.AppProfile), for the errors that wrap
// ErrTransactionNotAllowed to name it: the bigtable client does not tell.
// It changes nothing else; the client's configuration chooses the
// profile, and "" (the default) leaves the messages to say "the client's
// app profile".
func WithAppProfile(name string) Option {
	return optionFunc(func(c *config) error {
		c.appProfile = name
		return nil
	})
}

// ReadOption is an option for [Table.ReadRow] and [Table.ReadRows]: any
// bigtable.ReadOption (LimitRows, ReverseScan, WithFullReadStats, …) but
// bigtable.RowFilter, which would replace the expiry filter and is refused
// with ErrInvalidOption; use [RowFilter] instead.
//
// It is an alias so that Bigtable's options pass unchanged; in return
// the package's own read options compile where a bigtable.Table wants
// one. There [RowFilter] is a plain bigtable.RowFilter, and [KeepAlive]
// and [WithWriteTimes], which a bigtable.Table cannot honour, fail the
// read with a message naming them rather than be ignored.
type ReadOption = bigtable.ReadOption

// RowFilter returns a read option that applies f to the cells that are
// live, after the table's expiry filter. The order matters: LatestNFilter(1)
// then returns the newest live cell, where before expiry filtering it would
// return nothing once the newest cell has expired. At most one RowFilter
// may be given; combine filters with bigtable.ChainFilters or
// bigtable.InterleaveFilters.
//
// Passed to a bigtable.Table directly, it is a plain bigtable.RowFilter(f),
// with no expiry filtering.
func RowFilter(f bigtable.Filter) ReadOption {
	return rowFilterOption{ReadOption: bigtable.RowFilter(f), f: f}
}

// rowFilterOption embeds the bigtable option to satisfy the sealed
// interface; the Table recognises it by type and reads f.
type rowFilterOption struct {
	bigtable.ReadOption
	f bigtable.Filter
}

// KeepAlive returns a read option that keeps what the read returns alive
// for idle after it: time to idle, as Redis GETEX and memcached gat give
// it. For each column of a OneSecond or DefaultExpiration family (or a
// Move to one) that the read returns, its newest returned cell stays live
// until at least the read's now + idle, unless a writer replaces or
// deletes it. With a read margin m, which hides cells m before their
// expiry, live means visible to the table's reads: expiring after
// now + m + idle.
// A renewal that fails is reported with an error wrapping ErrRenewal
// (and ErrTransactionNotAllowed under multi-cluster routing), after every
// row was delivered. idle must be positive. Passed to a bigtable.Table
// directly, it makes the read fail with InvalidArgument.
//
// Costs and rationale: docs/api-notes.md#ttlkeepalive.
func KeepAlive(idle time.Duration) ReadOption {
	return keepAliveOption{misuse("ttl.KeepAlive"), idle}
}

// keepAliveOption embeds a bigtable option to satisfy the sealed
// interface; the Table recognises it by type and reads idle, and drops
// the embedded option, which is only for a bigtable.Table given it.
type keepAliveOption struct {
	bigtable.ReadOption
	idle time.Duration
}

// misuse returns the bigtable option that a ttl read option named name
// embeds when Bigtable cannot do what it asks: a filter that Bigtable
// refuses, so that the option passed to a bigtable.Table directly fails
// the read, with name in the message, instead of being ignored.
//
// The filter is a value regular expression that is not valid RE2 (an
// unclosed parenthesis) and spells the mistake. Bigtable documents that
// value_regex_filter must be valid RE2, and its server rejects a filter
// with an invalid pattern with InvalidArgument (google-cloud-cpp's
// filters.h says so; google-cloud-go#6519 quotes the server's "Error in
// field 'row_key_regex_filter'" for a bad row key pattern). The emulator
// (bttest v1.35) does too, quoting the pattern, though only once the read
// meets a cell: its read of an empty range succeeds. A valid pattern
// would not do: it would silently drop the cells.
func misuse(name string) bigtable.ReadOption {
	pattern := name + " is a ttl.Table read option, not a bigtable.Table one ("
	return bigtable.RowFilter(bigtable.ValueFilter(pattern))
}

// rawRowFilter is the dynamic type of a bigtable.RowFilter option.
var rawRowFilter = reflect.TypeOf(bigtable.RowFilter(bigtable.PassAllFilter()))
