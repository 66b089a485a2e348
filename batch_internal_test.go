package ttl

import (
	"context"
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
)

// ApplyRow and ApplyBatch build each change as it is written, without a
// recipe. These tests check that they build exactly what Apply and
// ApplyBulk build from the same changes recorded as recipes: the same
// bigtable.Mutation, count and error, on tables with and without write
// times and a read margin.

// CapturedTable is a TableAPI that keeps the rows and mutations it is
// handed. (Exported for the package's external tests: TestShapesMatchHand.)
type CapturedTable struct {
	bigtable.TableAPI
	Rows []string
	Muts []*bigtable.Mutation
}

func (c *CapturedTable) Apply(_ context.Context, row string, m *bigtable.Mutation, _ ...bigtable.ApplyOption) error {
	c.Rows, c.Muts = append(c.Rows, row), append(c.Muts, m)
	return nil
}

func (c *CapturedTable) ApplyBulk(_ context.Context, rows []string, muts []*bigtable.Mutation, _ ...bigtable.ApplyOption) ([]error, error) {
	c.Rows, c.Muts = append(c.Rows, rows...), append(c.Muts, muts...)
	return nil, nil
}

// sameError reports whether two errors read the same, the sentinel of an
// empty row aside: Apply's "mutation has no changes" is ApplyRow's "row
// has no changes".
func sameError(got, want error, empty bool) bool {
	switch {
	case (got == nil) != (want == nil):
		return false
	case got == nil:
		return true
	case empty:
		return errors.Is(got, ErrInvalidMutation) && errors.Is(want, ErrInvalidMutation)
	}
	return got.Error() == want.Error()
}

// directTables returns the tables the equivalence tests write to, each
// through its own capturing TableAPI, and the instant of their clock.
func directTables(t *testing.T) (now time.Time, tables map[string]*Table, apis map[string]*CapturedTable) {
	now = time.Date(2030, 4, 30, 9, 0, 0, 123456789, time.UTC)
	families := map[string]Strategy{
		"f": OneSecond(),
		"d": DefaultExpiration(time.Hour),
		"s": SequenceNumbers(2),
		"q": Move{To: SequenceNumbers(2), Start: now.Truncate(time.Millisecond).Add(-time.Hour)}, // supersedes the old cells
	}
	tables, apis = map[string]*Table{}, map[string]*CapturedTable{}
	for name, opts := range map[string][]Option{
		"plain":       {OtherFamilies("u")},
		"undeclared":  nil,
		"write times": {OtherFamilies("u"), RecordWriteTime()},
		"margin":      {OtherFamilies("u"), WithReadMargin(time.Minute)},
	} {
		api := &CapturedTable{}
		tbl, err := NewTable(api, families, append([]Option{WithClock(func() time.Time { return now })}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		tables[name], apis[name] = tbl, api
	}
	return now, tables, apis
}

// TestApplyRowMatchesApply writes random rows through ApplyRow and records
// the same changes for Apply, and checks that both hand over equal
// mutations or return the same error.
func TestApplyRowMatchesApply(t *testing.T) {
	ctx := context.Background()
	now, tables, apis := directTables(t)
	for name, tbl := range tables {
		t.Run(name, func(t *testing.T) {
			api := apis[name]
			r := rand.New(rand.NewPCG(3, uint64(len(name))))
			var valid, invalid int
			for i := range 5000 {
				ops := randomOps(r, now)
				m := NewMutation()
				recordAll(m, ops)
				api.Muts = nil
				wantErr := tbl.Apply(ctx, "r", m)
				want := api.Muts
				api.Muts = nil
				err := tbl.ApplyRow(ctx, "r", func(w RowWriter) { recordAll(w, ops) })
				switch {
				case !sameError(err, wantErr, len(ops) == 0):
					t.Fatalf("row %d %+v: error %v, want %v", i, ops, err, wantErr)
				case !reflect.DeepEqual(api.Muts, want):
					t.Fatalf("row %d %+v: handed over %+v, want %+v", i, ops, api.Muts, want)
				}
				if wantErr == nil {
					valid++
				} else {
					invalid++
				}
			}
			if valid < 500 || invalid < 500 {
				t.Errorf("%d valid and %d invalid rows: the generator should make more of each", valid, invalid)
			}
		})
	}
}

// TestApplyBatchMatchesApplyBulk writes random batches of rows through
// ApplyBatch and records the same changes for ApplyBulk, and checks that
// both hand over the same rows and equal mutations, and report the same
// errors at the same rows.
func TestApplyBatchMatchesApplyBulk(t *testing.T) {
	ctx := context.Background()
	now, tables, apis := directTables(t)
	for name, tbl := range tables {
		t.Run(name, func(t *testing.T) {
			api := apis[name]
			r := rand.New(rand.NewPCG(4, uint64(len(name))))
			for i := range 300 {
				rows := make([][]flatOp, r.IntN(40))
				keys, muts := make([]string, len(rows)), make([]*Mutation, len(rows))
				for j := range rows {
					rows[j], keys[j], muts[j] = randomOps(r, now), string(rune('a'+j%26))+string(rune('0'+j/26)), NewMutation()
					recordAll(muts[j], rows[j])
				}
				api.Rows, api.Muts = nil, nil
				wantErrs, wantErr := tbl.ApplyBulk(ctx, keys, muts)
				wantRows, wantMuts := api.Rows, api.Muts
				api.Rows, api.Muts = nil, nil
				errs, err := tbl.ApplyBatch(ctx, keys, func(j int, w RowWriter) { recordAll(w, rows[j]) })
				if !sameError(err, wantErr, false) || len(errs) != len(wantErrs) {
					t.Fatalf("batch %d: err %v and %d row errors, want %v and %d", i, err, len(errs), wantErr, len(wantErrs))
				}
				for j := range errs {
					if !sameError(errs[j], wantErrs[j], len(rows[j]) == 0) {
						t.Fatalf("batch %d, row %d %+v: error %v, want %v", i, j, rows[j], errs[j], wantErrs[j])
					}
				}
				if !reflect.DeepEqual(api.Rows, wantRows) || !reflect.DeepEqual(api.Muts, wantMuts) {
					t.Fatalf("batch %d: handed over rows %q, mutations %+v; want %q, %+v", i, api.Rows, api.Muts, wantRows, wantMuts)
				}
			}
		})
	}
}

// TestDirectAddMatchesRecipe checks a counter's Add written through
// ApplyRow and ApplyBatch against the same Add recorded for Apply: equal
// mutations, and the same errors for an Add outside a counter family and
// for an invalid window.
func TestDirectAddMatchesRecipe(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)
	api := &CapturedTable{}
	tbl, err := NewTable(api, map[string]Strategy{"c": Counter(OneSecond()), "f": OneSecond()}, WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	minute := Window{Size: time.Minute, Keep: time.Hour}
	for _, add := range []struct {
		family string
		w      Window
	}{{"c", minute}, {"c", Window{Size: time.Minute}}, {"f", minute}, {"c", Window{Size: -time.Minute}}} {
		m := NewMutation()
		m.Add(add.family, "n", 3, add.w)
		m.Add(add.family, "n", 4, add.w)
		api.Muts = nil
		wantErr := tbl.Apply(ctx, "r", m)
		want := api.Muts

		api.Muts = nil
		err := tbl.ApplyRow(ctx, "r", func(r RowWriter) {
			r.Add(add.family, "n", 3, add.w)
			r.Add(add.family, "n", 4, add.w)
		})
		if !sameError(err, wantErr, false) || !reflect.DeepEqual(api.Muts, want) {
			t.Errorf("ApplyRow, Add to %s in %v: error %v, handed over %+v; want %v, %+v", add.family, add.w, err, api.Muts, wantErr, want)
		}

		api.Muts = nil
		errs, err := tbl.ApplyBatch(ctx, []string{"r"}, func(_ int, w RowWriter) {
			w.Add(add.family, "n", 3, add.w)
			w.Add(add.family, "n", 4, add.w)
		})
		var rowErr error
		if errs != nil {
			rowErr = errs[0]
		}
		if err != nil || !sameError(rowErr, wantErr, false) || !reflect.DeepEqual(api.Muts, want) {
			t.Errorf("ApplyBatch, Add to %s in %v: error %v (call %v), handed over %+v; want %v, %+v", add.family, add.w, rowErr, err, api.Muts, wantErr, want)
		}
	}
}
