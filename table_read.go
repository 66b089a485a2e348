package ttl

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/internal/rules"
)

// ReadRow reads the live cells of one row, like bigtable.Table.ReadRow. A
// row with no live cell is returned as nil, with no error. With KeepAlive,
// a renewal that fails returns the row and an error wrapping ErrRenewal.
func (t *Table) ReadRow(ctx context.Context, row string, opts ...ReadOption) (bigtable.Row, error) {
	if err := t.check(ctx, "ReadRow"); err != nil {
		return nil, err
	}
	rd, err := t.readOptions(t.now(), opts)
	if err != nil {
		return nil, err
	}
	r, err := t.tbl.ReadRow(ctx, row, rd.opts...)
	if err != nil || r == nil {
		return r, err
	}
	r = rd.row(ctx, t, r)
	return r, rd.err()
}

// ReadRows reads the live cells of the rows in rs and calls f for each row
// that has one, in order, until f returns false, like
// bigtable.Table.ReadRows. It streams: rows are not collected. With
// KeepAlive, renewals that fail are reported, after every row was
// delivered, with an error wrapping ErrRenewal.
func (t *Table) ReadRows(ctx context.Context, rs bigtable.RowSet, f func(bigtable.Row) bool, opts ...ReadOption) error {
	if err := t.check(ctx, "ReadRows"); err != nil {
		return err
	}
	switch {
	case rs == nil || rules.IsNilPointer(rs):
		return fmt.Errorf("%w: ReadRows: nil row set", ErrNilArgument)
	case f == nil:
		return fmt.Errorf("%w: ReadRows: nil callback", ErrNilArgument)
	}
	rd, err := t.readOptions(t.now(), opts)
	if err != nil {
		return err
	}
	if !rd.writeTimes && rd.idle == 0 {
		return t.tbl.ReadRows(ctx, rs, f, rd.opts...)
	}
	if err := t.tbl.ReadRows(ctx, rs, func(r bigtable.Row) bool {
		if r = rd.row(ctx, t, r); r == nil {
			return true
		}
		return f(r)
	}, rd.opts...); err != nil {
		return err
	}
	return rd.err()
}

// A readCall is one readCall call's options, as the table turns them into
// Bigtable's, and what it does to each row it returns.
type readCall struct {
	now        time.Time // the call's clock reading
	opts       []bigtable.ReadOption
	writeTimes bool          // WithWriteTimes
	idle       time.Duration // KeepAlive; 0 without
	renewal    renewalRun    // KeepAlive's renewals
}

// readOptions turns the caller's read options into Bigtable's, with the
// one filter that passes live cells, and the caller's RowFilter after it.
func (t *Table) readOptions(now time.Time, opts []ReadOption) (*readCall, error) {
	var caller bigtable.Filter
	rd := &readCall{now: now, opts: make([]bigtable.ReadOption, 0, len(opts)+1)}
	rd.renewal.now = now
	for i, o := range opts {
		switch o := o.(type) {
		case nil:
			return nil, fmt.Errorf("%w: read option %d is nil", ErrInvalidOption, i)
		case rowFilterOption:
			if o.f == nil {
				return nil, fmt.Errorf("%w: RowFilter(nil)", ErrInvalidOption)
			}
			if caller != nil {
				return nil, fmt.Errorf("%w: more than one RowFilter; combine them with bigtable.ChainFilters", ErrInvalidOption)
			}
			caller = o.f
		case writeTimesOption:
			if !t.companions {
				return nil, fmt.Errorf("%w: WithWriteTimes on a table without RecordWriteTime", ErrInvalidOption)
			}
			rd.writeTimes, rd.renewal.writeTimes = true, true
		case keepAliveOption:
			switch {
			case o.idle <= 0:
				return nil, fmt.Errorf("%w: KeepAlive(%v): the idle time must be positive", ErrInvalidOption, o.idle)
			case rd.idle != 0:
				return nil, fmt.Errorf("%w: more than one KeepAlive", ErrInvalidOption)
			}
			rd.idle, rd.renewal.idle = o.idle, o.idle
		default:
			if reflect.TypeOf(o) == rawRowFilter {
				return nil, fmt.Errorf("%w: bigtable.RowFilter would replace the expiry filter; use ttl.RowFilter", ErrInvalidOption)
			}
			rd.opts = append(rd.opts, o)
		}
	}
	hide := now.Add(t.margin)
	f := t.plan.live(hide)
	if caller != nil {
		f = bigtable.ChainFilters(f, caller)
	}
	if rd.writeTimes {
		f = bigtable.InterleaveFilters(f, t.plan.companions(hide))
	}
	rd.opts = append(rd.opts, bigtable.RowFilter(f))
	return rd, nil
}

// row does to a row read what the read's options ask: attach write times,
// renew what is due. It returns nil for a row left with no data cell.
func (rd *readCall) row(ctx context.Context, t *Table, r bigtable.Row) bigtable.Row {
	if rd.writeTimes {
		if r = t.companions.attach(r, t.managed); r == nil {
			return nil
		}
	}
	if rd.idle > 0 {
		t.renew(ctx, r, &rd.renewal)
	}
	return r
}

// err returns the error of the read's failed renewals, or nil.
func (rd *readCall) err() error { return rd.renewal.failed.err() }

// Why reads hide a cell, as Table.Hidden says it.
const (
	hiddenExpired    = "expired"                // its expiry has passed
	hiddenMargin     = "within the read margin" // it expires within WithReadMargin's margin
	hiddenSuperseded = "superseded"             // newer versions fill SequenceNumbers' n
	hiddenUndeclared = "family not declared"    // a family OtherFamilies does not name
	hiddenCompanion  = "write-time companion"   // a RecordWriteTime companion column
)

// Hidden says why a read through the table at now hides item, a stored
// cell with newer cells above it in its column: "expired", "within the
// read margin" (WithReadMargin), "superseded" (by newer versions, under
// SequenceNumbers), "family not declared" (OtherFamilies) or "write-time
// companion" (RecordWriteTime); "" when the table's rules keep it live.
// It reads nothing and is safe for concurrent use.
func (t *Table) Hidden(item bigtable.ReadItem, newer int, now time.Time) string {
	if t == nil {
		return ""
	}
	family, column := rules.SplitColumn(item.Column)
	s, managed := t.managed[family]
	switch {
	case !managed && t.others != nil && !t.others[family]:
		return hiddenUndeclared
	case !managed:
		return ""
	case bool(t.companions) && strings.HasPrefix(column, WriteTimePrefix):
		return hiddenCompanion
	}
	if n, ok := s.Versions(); ok {
		if newer >= n {
			return hiddenSuperseded
		}
		return ""
	}
	exp, ok := s.ExpiresAt(item.Timestamp)
	switch {
	case !ok:
		return ""
	case !exp.After(now):
		return hiddenExpired
	case !exp.After(now.Add(t.margin)):
		return hiddenMargin
	}
	return ""
}
