package bench_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/testkit"
)

// The client-side write pairs, by the shape of the write (issue 22): a
// lifetime for the whole call or one per cell, Until or For, families of
// different strategies, 1 to 10 cells, a single Apply or 500 rows in
// ApplyBulk. Nothing is sent: each side hands its mutations to a TableAPI
// that drops them, so the pair measures what the library adds to building
// them by hand. Each side builds its input in each iteration as a program
// writes it: the raw side a bigtable.Mutation with the timestamps worked
// out inline from one reading of the clock, the library a recipe recorded
// and applied in the same function. TestShapesMatchHand checks that the
// two sides hand over equal mutations.

// The families of the shapes' table.
const (
	shapeOne     = "f" // OneSecond: the timestamp is the expiry
	shapeDefault = "d" // DefaultExpiration(shapeTTL): the write time for Default
	shapeSeq     = "s" // SequenceNumbers(3): the sequence number
	shapeTTL     = 48 * time.Hour
)

var (
	shapeColumns = []string{"c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9"}
	// Each cell's own lifetime: For(shapeFors[i]) or Until(shapeUntils[i]).
	shapeFors   = make([]time.Duration, len(shapeColumns))
	shapeUntils = make([]time.Time, len(shapeColumns))
)

func init() {
	for i := range shapeColumns {
		shapeFors[i] = time.Duration(i+1) * time.Minute
		shapeUntils[i] = testkit.Base.Add(time.Duration(i+1)*time.Hour + 250*time.Millisecond)
	}
}

// A writeShape is one shape of write: a row's cells, and the rows of
// ApplyBulk (0 for a single Apply).
type writeShape struct {
	name  string
	kind  shapeKind
	cells int
	rows  int
}

type shapeKind int

const (
	lifePerCall   shapeKind = iota // every cell For(1h)
	lifeUntil                      // cell i Until(shapeUntils[i])
	lifeFor                        // cell i For(shapeFors[i])
	mixedFamilies                  // For(1h), Default and Version cells in three families
)

// shapes returns the shapes measured.
func shapes() []writeShape {
	var all []writeShape
	for _, s := range []writeShape{
		{"cells=1/life=call", lifePerCall, 1, 0},
		{"cells=5/life=call", lifePerCall, 5, 0},
		{"cells=10/life=call", lifePerCall, 10, 0},
		{"cells=5/life=until", lifeUntil, 5, 0},
		{"cells=5/life=for", lifeFor, 5, 0},
		{"cells=10/life=until", lifeUntil, 10, 0},
		{"cells=10/life=for", lifeFor, 10, 0},
		{"cells=5/mixed", mixedFamilies, 5, 0},
		{"cells=2/life=call", lifePerCall, 2, benchRows},
		{"cells=2/life=until", lifeUntil, 2, benchRows},
		{"cells=2/life=for", lifeFor, 2, benchRows},
		{"cells=2/mixed", mixedFamilies, 2, benchRows},
	} {
		if s.rows > 0 {
			s.name = fmt.Sprintf("bulk=%d/%s", s.rows, s.name)
		}
		all = append(all, s)
	}
	return all
}

// mixedCell returns the family and lifetime of cell i of a mixedFamilies
// row: two cells for an hour, two of DefaultExpiration's default, then
// version 7.
func mixedCell(i int) (family string, life ttl.Lifetime) {
	switch i {
	case 0, 1:
		return shapeOne, ttl.For(time.Hour)
	case 2, 3:
		return shapeDefault, ttl.Default
	}
	return shapeSeq, ttl.Version(7)
}

// buildShape builds a row of shape s by hand at now, as a program on the
// raw client does: each timestamp worked out inline.
func buildShape(m *bigtable.Mutation, s *writeShape, now time.Time) {
	switch s.kind {
	case lifePerCall:
		ts := bigtable.Time(now.Add(time.Hour))
		for _, c := range shapeColumns[:s.cells] {
			m.Set(shapeOne, c, ts, benchValue)
		}
	case lifeUntil:
		for i, c := range shapeColumns[:s.cells] {
			m.Set(shapeOne, c, bigtable.Time(shapeUntils[i]), benchValue)
		}
	case lifeFor:
		for i, c := range shapeColumns[:s.cells] {
			m.Set(shapeOne, c, bigtable.Time(now.Add(shapeFors[i])), benchValue)
		}
	case mixedFamilies:
		hour, write := bigtable.Time(now.Add(time.Hour)), bigtable.Time(now)
		for i, c := range shapeColumns[:s.cells] {
			switch family, _ := mixedCell(i); family {
			case shapeOne:
				m.Set(family, c, hour, benchValue)
			case shapeDefault:
				m.Set(family, c, write, benchValue)
			default:
				m.Set(family, c, bigtable.Timestamp(7*1000), benchValue)
			}
		}
	}
}

// recordShape records a row of shape s as a recipe, as buildShape builds
// it: the lifetimes worked out inline, the shape's switch outside the
// loop.
func recordShape(m *ttl.Mutation, s *writeShape) {
	switch s.kind {
	case lifePerCall:
		for _, c := range shapeColumns[:s.cells] {
			m.Set(shapeOne, c, benchValue, ttl.For(time.Hour))
		}
	case lifeUntil:
		for i, c := range shapeColumns[:s.cells] {
			m.Set(shapeOne, c, benchValue, ttl.Until(shapeUntils[i]))
		}
	case lifeFor:
		for i, c := range shapeColumns[:s.cells] {
			m.Set(shapeOne, c, benchValue, ttl.For(shapeFors[i]))
		}
	case mixedFamilies:
		for i, c := range shapeColumns[:s.cells] {
			family, life := mixedCell(i)
			m.Set(family, c, benchValue, life)
		}
	}
}

// writeShapeRow writes a row of shape s through a RowWriter, as
// recordShape records it.
func writeShapeRow(w ttl.RowWriter, s *writeShape) {
	switch s.kind {
	case lifePerCall:
		for _, c := range shapeColumns[:s.cells] {
			w.Set(shapeOne, c, benchValue, ttl.For(time.Hour))
		}
	case lifeUntil:
		for i, c := range shapeColumns[:s.cells] {
			w.Set(shapeOne, c, benchValue, ttl.Until(shapeUntils[i]))
		}
	case lifeFor:
		for i, c := range shapeColumns[:s.cells] {
			w.Set(shapeOne, c, benchValue, ttl.For(shapeFors[i]))
		}
	case mixedFamilies:
		for i, c := range shapeColumns[:s.cells] {
			family, life := mixedCell(i)
			w.Set(family, c, benchValue, life)
		}
	}
}

// newShapeTable returns the library's table for the shapes, over api.
func newShapeTable(tb testing.TB, api bigtable.TableAPI, clock *testkit.Clock) *ttl.Table {
	tb.Helper()
	t, err := ttl.NewTable(api, map[string]ttl.Strategy{
		shapeOne:     ttl.OneSecond(),
		shapeDefault: ttl.DefaultExpiration(shapeTTL),
		shapeSeq:     ttl.SequenceNumbers(3),
	}, ttl.WithClock(clock.Now), ttl.OtherFamilies(benchOther))
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

// rawWrite is the raw side of s: the mutation (or the rows' mutations)
// built by hand at now, one reading of the clock, and handed over.
func (s *writeShape) rawWrite(ctx context.Context, api bigtable.TableAPI, now time.Time) error {
	if s.rows == 0 {
		m := bigtable.NewMutation()
		buildShape(m, s, now)
		return api.Apply(ctx, "r", m)
	}
	muts := make([]*bigtable.Mutation, s.rows)
	for i := range muts {
		m := bigtable.NewMutation()
		buildShape(m, s, now)
		muts[i] = m
	}
	return noErrors(api.ApplyBulk(ctx, benchKeys[:s.rows], muts))
}

// libWrite is the library's side of s: the recipe (or the rows' recipes)
// recorded and applied. A single Apply's recipe, recorded and applied in
// one function, stays on the stack, as in a program that writes so;
// ApplyBulk's, kept in a slice, are on the heap.
func (s *writeShape) libWrite(ctx context.Context, tbl *ttl.Table) error {
	if s.rows == 0 {
		m := ttl.NewMutation()
		recordShape(m, s)
		return tbl.Apply(ctx, "r", m)
	}
	muts := make([]*ttl.Mutation, s.rows)
	for i := range muts {
		m := ttl.NewMutation()
		recordShape(m, s)
		muts[i] = m
	}
	return noErrors(tbl.ApplyBulk(ctx, benchKeys[:s.rows], muts))
}

// directWrite is the library's other side of s: the row written in
// ApplyRow, or the rows in ApplyBatch, each change built as it is
// written, without a recipe.
func (s *writeShape) directWrite(ctx context.Context, tbl *ttl.Table) error {
	if s.rows == 0 {
		return tbl.ApplyRow(ctx, "r", func(r ttl.RowWriter) { writeShapeRow(r, s) })
	}
	return noErrors(tbl.ApplyBatch(ctx, benchKeys[:s.rows], func(_ int, w ttl.RowWriter) { writeShapeRow(w, s) }))
}

// BenchmarkClientWrite runs each shape's pairs: impl=raw, impl=ttl and
// impl=ttl-direct, on a TableAPI that sends nothing.
func BenchmarkClientWrite(b *testing.B) {
	ctx := context.Background()
	table := func(b *testing.B, clock *testkit.Clock) *ttl.Table { return newShapeTable(b, testkit.Nop{}, clock) }
	for _, s := range shapes() {
		s := s
		b.Run(s.name, func(b *testing.B) {
			clientPairOn(b, table, func(api bigtable.TableAPI, now time.Time) error {
				return s.rawWrite(ctx, api, now)
			}, func(tbl *ttl.Table) error {
				return s.libWrite(ctx, tbl)
			}, func(tbl *ttl.Table) error {
				return s.directWrite(ctx, tbl)
			})
		})
	}
}

// TestShapesMatchHand checks that each shape's sides hand over the same
// rows and equal mutations, so that the pairs compare like with like: the
// library's recipe (Apply, ApplyBulk) and its writers without one
// (ApplyRow, ApplyBatch) each against the raw side.
func TestShapesMatchHand(t *testing.T) {
	ctx := context.Background()
	for _, s := range shapes() {
		s := s
		t.Run(s.name, func(t *testing.T) {
			clock := testkit.NewClock(testkit.Base.Add(123456789 * time.Nanosecond))
			var raw testkit.Captured
			if err := s.rawWrite(ctx, &raw, clock.Now()); err != nil {
				t.Fatal(err)
			}
			if want := max(s.rows, 1); len(raw.Muts) != want {
				t.Fatalf("the raw side handed over %d mutations, want %d", len(raw.Muts), want)
			}
			for impl, write := range map[string]func(*ttl.Table) error{
				"ttl":        func(tbl *ttl.Table) error { return s.libWrite(ctx, tbl) },
				"ttl-direct": func(tbl *ttl.Table) error { return s.directWrite(ctx, tbl) },
			} {
				var lib testkit.Captured
				if err := write(newShapeTable(t, &lib, clock)); err != nil {
					t.Fatal(impl, err)
				}
				if !reflect.DeepEqual(raw.Rows, lib.Rows) || !reflect.DeepEqual(raw.Muts, lib.Muts) {
					t.Errorf("impl=%s handed over rows %q, mutations %+v; by hand %q, %+v", impl, lib.Rows, lib.Muts, raw.Rows, raw.Muts[0])
				}
			}
		})
	}
}
