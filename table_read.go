package ttl

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"cloud.google.com/go/bigtable"
)

// ReadRow reads the live cells of one row, like bigtable.Table.ReadRow. A
// row with no live cell is returned as nil, with no error.
func (t *Table) ReadRow(ctx context.Context, row string, opts ...ReadOption) (bigtable.Row, error) {
	if err := t.check(ctx, "ReadRow"); err != nil {
		return nil, err
	}
	ropts, writeTimes, err := t.readOptions(t.now(), opts)
	if err != nil {
		return nil, err
	}
	r, err := t.tbl.ReadRow(ctx, row, ropts...)
	if err != nil || !writeTimes {
		return r, err
	}
	return t.companions.attach(r, t.managed), nil
}

// ReadRows reads the live cells of the rows in rs and calls f for each row
// that has one, in order, until f returns false, like
// bigtable.Table.ReadRows. It streams: rows are not collected.
func (t *Table) ReadRows(ctx context.Context, rs bigtable.RowSet, f func(bigtable.Row) bool, opts ...ReadOption) error {
	if err := t.check(ctx, "ReadRows"); err != nil {
		return err
	}
	switch {
	case rs == nil || isNilPointer(rs):
		return fmt.Errorf("%w: ReadRows: nil row set", ErrNilArgument)
	case f == nil:
		return fmt.Errorf("%w: ReadRows: nil callback", ErrNilArgument)
	}
	ropts, writeTimes, err := t.readOptions(t.now(), opts)
	if err != nil {
		return err
	}
	if !writeTimes {
		return t.tbl.ReadRows(ctx, rs, f, ropts...)
	}
	return t.tbl.ReadRows(ctx, rs, func(r bigtable.Row) bool {
		if r = t.companions.attach(r, t.managed); r == nil {
			return true
		}
		return f(r)
	}, ropts...)
}

// readOptions turns the caller's read options into Bigtable's, with the
// one filter that passes live cells, and the caller's RowFilter after it.
func (t *Table) readOptions(now time.Time, opts []ReadOption) (out []bigtable.ReadOption, writeTimes bool, err error) {
	var caller bigtable.Filter
	out = make([]bigtable.ReadOption, 0, len(opts)+1)
	for i, o := range opts {
		switch o := o.(type) {
		case nil:
			return nil, false, fmt.Errorf("%w: read option %d is nil", ErrInvalidOption, i)
		case rowFilterOption:
			if o.f == nil {
				return nil, false, fmt.Errorf("%w: RowFilter(nil)", ErrInvalidOption)
			}
			if caller != nil {
				return nil, false, fmt.Errorf("%w: more than one RowFilter; combine them with bigtable.ChainFilters", ErrInvalidOption)
			}
			caller = o.f
		case writeTimesOption:
			if !t.companions {
				return nil, false, fmt.Errorf("%w: WithWriteTimes on a table without RecordWriteTime", ErrInvalidOption)
			}
			writeTimes = true
		default:
			if reflect.TypeOf(o) == rawRowFilter {
				return nil, false, fmt.Errorf("%w: bigtable.RowFilter would replace the expiry filter; use ttl.RowFilter", ErrInvalidOption)
			}
			out = append(out, o)
		}
	}
	now = now.Add(t.margin)
	f := t.plan.live(now)
	if caller != nil {
		f = bigtable.ChainFilters(f, caller)
	}
	if writeTimes {
		f = bigtable.InterleaveFilters(f, t.plan.companions(now))
	}
	return append(out, bigtable.RowFilter(f)), writeTimes, nil
}
