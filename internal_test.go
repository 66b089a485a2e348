package ttl

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	randv1 "math/rand"
	"math/rand/v2"
	"reflect"
	"regexp"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/internal/rules"
)

// The package's internal tests: they check unexported helpers against
// what the exported API promises (the write's recipe, ApplyRow and
// ApplyBatch against Apply and ApplyBulk, the family pattern, the window
// arithmetic). The external tests stand in tests/, by concern.

// The recipe keeps its changes as runs that share a kind, a family and a
// lifetime, and the writer builds a run at a time, remembering the last
// family and timestamp. These tests check that against the plain way:
// each change on its own, its family looked up and its timestamp computed
// for it.

// flatOp is one change as recorded.
type flatOp struct {
	kind           mutationKind
	family, column string
	value          []byte
	life           Lifetime
}

// refBuild builds ops the plain way, or reports the first invalid change.
func refBuild(t *Table, now time.Time, ops []flatOp) (built, error) {
	if len(ops) == 0 {
		return built{}, fmt.Errorf("%w: mutation has no changes", ErrInvalidMutation)
	}
	b := newBuilt()
	for _, o := range ops {
		if err := refAdd(t, &b, now, o); err != nil {
			return built{}, err
		}
	}
	return b, nil
}

func refAdd(t *Table, b *built, now time.Time, o flatOp) error {
	if o.kind == opDeleteRow {
		b.deleteRow()
		return nil
	}
	s, managed := t.managed[o.family]
	if !managed {
		return refAddUnmanaged(t, b, now, o)
	}
	if o.kind == opDeleteFamily {
		b.deleteFamily(o.family)
		return nil
	}
	if err := t.companions.checkColumn(o.family, o.column); err != nil {
		return err
	}
	if o.kind == opDeleteColumn || o.kind == opReplace {
		b.deleteColumn(o.family, o.column)
		t.companions.deleteColumn(b, o.family, o.column)
		if o.kind == opDeleteColumn {
			return nil
		}
	}
	ts, err := s.Timestamp(now, o.life)
	if err != nil {
		return fmt.Errorf("%w (family %q, column %q)", err, o.family, o.column)
	}
	if t.margin > 0 {
		if exp, ok := s.ExpiresAt(ts); ok && !exp.After(now.Add(t.margin)) {
			return fmt.Errorf("%w: %v expires at %v, within the read margin of %v after now (%v) (family %q, column %q)",
				ErrExpired, o.life, exp.UTC().Format(time.RFC3339Nano), t.margin, now.UTC().Format(time.RFC3339Nano), o.family, o.column)
		}
	}
	if old, ok := s.supersedes(ts); ok {
		b.deleteRange(o.family, o.column, old.Lo, old.Hi)
		t.companions.deleteRange(b, o.family, o.column, old.Lo, old.Hi)
	}
	b.set(o.family, o.column, ts, o.value)
	t.companions.set(b, o.family, o.column, ts, now)
	return nil
}

func refAddUnmanaged(t *Table, b *built, now time.Time, o flatOp) error {
	if err := t.checkUnmanaged(o.family, o.column); err != nil {
		return err
	}
	switch o.kind {
	case opDeleteFamily:
		b.deleteFamily(o.family)
		return nil
	case opDeleteColumn:
		b.deleteColumn(o.family, o.column)
		return nil
	}
	if o.life.kind != lifeDefault {
		return fmt.Errorf("%w: %v in a family without a strategy, which keeps cells as its GC policy says; use Default (family %q, column %q)",
			ErrLifetime, o.life, o.family, o.column)
	}
	ms, inRange := rules.FloorMillis(now)
	if inRange != 0 {
		return fmt.Errorf("%w: now (%v) is outside 1970 to the year 294,247 (family %q, column %q)",
			ErrOutOfRange, now.UTC().Format(time.RFC3339Nano), o.family, o.column)
	}
	if o.kind == opReplace {
		b.deleteColumn(o.family, o.column)
	}
	b.set(o.family, o.column, bigtable.Timestamp(ms*1000), o.value)
	return nil
}

// changeWriter is what records or writes changes: a *Mutation, a
// RowWriter.
type changeWriter interface {
	Set(family, column string, value []byte, life Lifetime)
	Replace(family, column string, value []byte, life Lifetime)
	DeleteCellsInColumn(family, column string)
	DeleteCellsInFamily(family string)
	DeleteRow()
}

// record records or writes o in m through the public methods.
func (o flatOp) record(m changeWriter) {
	switch o.kind {
	case opSet:
		m.Set(o.family, o.column, o.value, o.life)
	case opReplace:
		m.Replace(o.family, o.column, o.value, o.life)
	case opDeleteColumn:
		m.DeleteCellsInColumn(o.family, o.column)
	case opDeleteFamily:
		m.DeleteCellsInFamily(o.family)
	case opDeleteRow:
		m.DeleteRow()
	}
}

// recordAll records or writes ops in m, in order.
func recordAll(m changeWriter, ops []flatOp) {
	for _, o := range ops {
		o.record(m)
	}
}

// randomOps returns up to 16 changes, each sharing its predecessor's
// kind, family and lifetime more often than not, so that runs are long
// and cross the recipe's fifth change; a few are invalid.
func randomOps(r *rand.Rand, now time.Time) []flatOp {
	families := []string{"f", "d", "s", "q", "u", "x", ""}
	lives := []Lifetime{For(time.Hour), For(30 * time.Second), For(-time.Second), For(time.Millisecond / 2),
		Until(now.Add(2 * time.Hour)), Forever, Default, Version(3), Version(-1)}
	columns := []string{"c0", "c1", "c2", "\xff\xffwt:c"}
	ops := make([]flatOp, r.IntN(17))
	for i := range ops {
		o := flatOp{
			kind:   mutationKind(r.IntN(5)),
			family: families[r.IntN(len(families))],
			life:   lives[r.IntN(len(lives))],
		}
		if i > 0 && r.IntN(10) < 7 {
			o = ops[i-1]
		}
		if r.IntN(20) == 0 {
			o.kind = mutationKind(r.IntN(5))
		}
		o.column = columns[r.IntN(len(columns)-1)]
		if r.IntN(40) == 0 {
			o.column = columns[len(columns)-1]
		}
		o.value = []byte(fmt.Sprint("v", r.IntN(100)))
		// The fields a kind does not take are not recorded.
		switch o.kind {
		case opDeleteColumn:
			o.value, o.life = nil, Default
		case opDeleteFamily:
			o.column, o.value, o.life = "", nil, Default
		case opDeleteRow:
			o.family, o.column, o.value, o.life = "", "", nil, Default
		}
		ops[i] = o
	}
	return ops
}

// TestBuildMatchesPlain builds random recipes, plain and conditional, on
// tables with and without write times and a read margin, and checks that
// each gives the bigtable.Mutation (compared field by field), the count
// and the error that building each change on its own gives, with a writer
// for each mutation, with one writer for many, and with one writer for
// many building into a slab of mutations, as ApplyBulk uses it: a row
// built takes the slab's next mutation, a row refused leaves it empty.
func TestBuildMatchesPlain(t *testing.T) {
	now := time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)
	families := map[string]Strategy{
		"f": OneSecond(),
		"d": DefaultExpiration(time.Hour),
		"s": SequenceNumbers(2),
		"q": Move{To: SequenceNumbers(2), Start: now.Add(-time.Hour)}, // supersedes the old cells
	}
	for _, cfg := range []struct {
		name string
		opts []Option
	}{
		{"plain", []Option{OtherFamilies("u")}},
		{"undeclared", nil},
		{"write times", []Option{OtherFamilies("u"), RecordWriteTime()}},
		{"margin", []Option{OtherFamilies("u"), WithReadMargin(time.Minute)}},
	} {
		t.Run(cfg.name, func(t *testing.T) {
			tbl, err := NewTable(struct{ bigtable.TableAPI }{}, families, cfg.opts...)
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(1, uint64(len(cfg.name))))
			shared := tbl.writer(now)
			slabbed := tbl.writer(now) // as ApplyBulk uses it
			var valid, invalid int
			for i := range cases(20_000) {
				ops := randomOps(r, now)
				m := NewMutation()
				recordAll(m, ops)
				want, wantErr := refBuild(tbl, now, ops)
				cond := r.IntN(8) == 0
				if cond {
					ops2 := randomOps(r, now)
					m2 := NewMutation()
					recordAll(m2, ops2)
					want, wantErr = refCond(tbl, now, ops, ops2)
					m = NewCondMutation(bigtable.LatestNFilter(1), m, m2)
				}
				own := tbl.writer(now)
				if len(slabbed.slab) == 0 {
					slabbed.slab = make([]bigtable.Mutation, 1+r.IntN(3))
				}
				for _, w := range []*cellWriter{&own, &shared, &slabbed} {
					slab := len(w.slab)
					var next *bigtable.Mutation
					if slab > 0 {
						next = &w.slab[0]
					}
					got, err := w.build(m, topLevel)
					switch {
					case (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error():
						t.Fatalf("mutation %d %+v: error %v, want %v", i, ops, err, wantErr)
					case got.n != want.n || !reflect.DeepEqual(got.m, want.m):
						t.Fatalf("mutation %d %+v: built %d changes %+v, want %d %+v", i, ops, got.n, got.m, want.n, want.m)
					case slab > 0 && err != nil && !cond && (len(w.slab) != slab || !reflect.DeepEqual(*next, bigtable.Mutation{})):
						t.Fatalf("mutation %d %+v: refused, it left the slab %d long (was %d), its next mutation %+v", i, ops, len(w.slab), slab, *next)
					case slab > 0 && err == nil && !cond && (got.m != next || len(w.slab) != slab-1):
						t.Fatalf("mutation %d %+v: built into %p, the slab now %d long; want its next mutation %p, and %d", i, ops, got.m, len(w.slab), next, slab-1)
					}
				}
				if wantErr == nil {
					valid++
				} else {
					invalid++
				}
			}
			if valid < cases(2000) || invalid < cases(2000) {
				t.Errorf("%d valid and %d invalid mutations: the generator should make more of each", valid, invalid)
			}
		})
	}
}

// refCond builds a conditional mutation with a LatestNFilter(1) predicate
// and the given branches the plain way.
func refCond(t *Table, now time.Time, yes, no []flatOp) (built, error) {
	var branches [2]*bigtable.Mutation
	n := 0
	for i, ops := range [2][]flatOp{yes, no} {
		if len(ops) == 0 {
			continue
		}
		b, err := refBuild(t, now, ops)
		if err != nil {
			return built{}, err
		}
		branches[i] = b.m
		n += b.n
	}
	if branches[0] == nil && branches[1] == nil {
		return built{}, fmt.Errorf("%w: conditional mutation has no changes in either branch", ErrInvalidMutation)
	}
	cond := bigtable.ChainFilters(t.plan.live(now.Add(t.margin)), bigtable.LatestNFilter(1))
	return built{m: bigtable.NewCondMutation(cond, branches[0], branches[1]), n: n}, nil
}

// TestBulkGroupRows checks that a group sends the call's rows as they are
// while they run on, and a list of them with their indexes once one is
// left out.
func TestBulkGroupRows(t *testing.T) {
	rows := make([]string, 50)
	for i := range rows {
		rows[i] = fmt.Sprint("r", i)
	}
	r := rand.New(rand.NewPCG(2, 2))
	var g bulkGroup
	for range 2000 {
		var want []int
		for i := range rows {
			if r.IntN(30) > 0 { // or left out
				want = append(want, i)
				g.add(i, rows, built{m: bigtable.NewMutation(), n: 1})
			}
			if r.IntN(25) == 0 || i == len(rows)-1 {
				keys := g.keys(rows)
				if len(keys) != len(want) || g.changes != len(want) {
					t.Fatalf("group of %d keys, %d changes; want %d", len(keys), g.changes, len(want))
				}
				for j, k := range keys {
					if k != rows[want[j]] || g.at(j) != want[j] {
						t.Fatalf("row %d of the group is %q at %d, want %q at %d", j, k, g.at(j), rows[want[j]], want[j])
					}
				}
				g.reset()
				want = want[:0]
			}
		}
	}
}

// TestQuickTimestamp checks quickTimestamp against longTimestamp at
// instants and lifetimes around every boundary its arithmetic meets: a
// nanosecond carry into the next second, a millisecond edge, now itself,
// 1970, the end of its range.
func TestQuickTimestamp(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	edge := func() int64 { // nanoseconds within a second, often at an edge
		switch r.IntN(4) {
		case 0:
			return r.Int64N(1e9)
		case 1:
			return r.Int64N(1000)*1e6 + r.Int64N(3) - 1 // at a millisecond
		case 2:
			return 1e9 - 1 - r.Int64N(3)
		}
		return r.Int64N(3)
	}
	secs := []int64{0, 1, 1903770000, quickSec - 1, quickSec, quickSec - 3600}
	durations := []int64{0, 1, -1, int64(time.Millisecond), int64(time.Hour), math.MaxInt64, math.MinInt64}
	name := func() string { return "rule" }
	quick := 0
	for range cases(400_000) {
		now := time.Unix(secs[r.IntN(len(secs))]+r.Int64N(3)-1, 0).Add(time.Duration(edge()))
		var life Lifetime
		switch r.IntN(5) {
		case 0:
			d := durations[r.IntN(len(durations))]
			if r.IntN(2) == 0 {
				d = r.Int64N(3600)*1e9 + edge() - int64(now.Nanosecond())
			}
			life = For(time.Duration(d))
		case 1:
			life = Until(now.Add(time.Duration(r.Int64N(3e9) - 1e9 + edge())))
		case 2:
			life = Until(time.Unix(secs[r.IntN(len(secs))]+r.Int64N(3)-1, edge()))
		case 3:
			// An expiry about one offset after 1970: a timestamp about 0.
			offsets := []time.Duration{time.Millisecond, 48 * time.Hour}
			life = Until(time.Unix(0, 0).Add(offsets[r.IntN(2)] + time.Duration(r.Int64N(5e6)-25e5)))
		default:
			life = Default
		}
		for _, rule := range []rules.Time{{Offset: 0}, {Offset: time.Millisecond}, {Offset: 48 * time.Hour}, {Offset: time.Duration(math.MaxInt64 / 1e6 * 1e6)}} {
			ts, ok := quickTimestamp(rule, now, life)
			want, err := longTimestamp(rule, now, life, name)
			if ok && (err != nil || ts != want) {
				t.Fatalf("offset %v, now %v, %v: quick %d, long %d, %v", rule.Offset, now.UTC().Format(time.RFC3339Nano), life, ts, want, err)
			}
			if ok {
				quick++
			}
		}
	}
	if quick < cases(200_000) {
		t.Errorf("only %d of %d cases took the quick path", quick, 4*cases(400_000))
	}
}

// cases is the number of random cases a test draws: full, or a fifth of
// it under -short, as CI runs the tests on the minimum versions (the run
// on the newest versions draws them all).
func cases(full int) int {
	if testing.Short() {
		return full / 5
	}
	return full
}

// TestRecipeSize checks that a recipe of five changes to one family with
// one lifetime is one allocation of 280 bytes, in the allocator's 288-byte
// size class (a field of more than 8 bytes added to Mutation would take it
// to 320), and so is a recipe of two changes each with its own lifetime.
func TestRecipeSize(t *testing.T) {
	if size := reflect.TypeOf(Mutation{}).Size(); size != 280 {
		t.Errorf("a Mutation is %d bytes, want 280", size)
	}
	if size := reflect.TypeOf(run{}).Size(); size != 32 {
		t.Errorf("a run is %d bytes, want 32", size)
	}
	value := []byte("v")
	var sink *Mutation
	allocs := testing.AllocsPerRun(100, func() {
		m := NewMutation()
		for _, c := range []string{"c0", "c1", "c2", "c3", "c4"} {
			m.Set("f", c, value, For(time.Hour))
		}
		sink = m
	})
	if allocs != 1 {
		t.Errorf("a 5-change recipe takes %v allocations, want 1", allocs)
	}
	until := time.Unix(2e9, 0)
	allocs = testing.AllocsPerRun(100, func() {
		m := NewMutation()
		m.Set("f", "token", value, Until(until))
		m.Set("f", "refresh", value, Until(until.Add(time.Hour)))
		sink = m
	})
	if allocs != 1 {
		t.Errorf("a recipe of 2 changes with lifetimes of their own takes %v allocations, want 1", allocs)
	}
	allocs = testing.AllocsPerRun(100, func() {
		m := NewMutation()
		for i := range 5 {
			m.Set("f", "c", value, Until(until.Add(time.Duration(i)*time.Hour)))
		}
		sink = m
	})
	if allocs != 2 {
		t.Errorf("a recipe of 5 changes with lifetimes of their own takes %v allocations, want 2", allocs)
	}
	_ = sink
}

// TestTimestampAllocatesNothing checks that Strategy.Timestamp allocates
// nothing for any strategy, with a grace or without, under each kind of
// lifetime it takes: a write stamps every cell with it, and the
// benchmarks hold it to no allocation (scripts/bench.sh).
func TestTimestampAllocatesNothing(t *testing.T) {
	now := time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		s    Strategy
		life Lifetime
	}{
		{OneSecond(), For(time.Hour)},
		{OneSecond(), Until(now.Add(time.Hour))},
		{Grace(OneSecond(), time.Minute), For(time.Hour)},
		{DefaultExpiration(48 * time.Hour), Default},
		{DefaultExpiration(48 * time.Hour), For(time.Hour)},
		{Grace(DefaultExpiration(48*time.Hour), time.Minute), Default},
		{SequenceNumbers(3), Version(7)},
		{Counter(DefaultExpiration(48 * time.Hour)), Default},
	} {
		var ts bigtable.Timestamp
		allocs := testing.AllocsPerRun(100, func() {
			var err error
			if ts, err = tc.s.Timestamp(now, tc.life); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%v.Timestamp(now, %v) makes %v allocations, want 0", tc.s, tc.life, allocs)
		}
		_ = ts
	}
}

// epochNanos returns t in nanoseconds since the Unix epoch, exactly.
func epochNanos(t time.Time) *big.Int {
	n := new(big.Int).Mul(big.NewInt(t.Unix()), big.NewInt(1e9))
	return n.Add(n, big.NewInt(int64(t.Nanosecond())))
}

// TestWindowStartFloors checks Window.start against exact arithmetic, the
// largest multiple of Size since the epoch not after t, at instants around
// the epoch and around window edges on both sides of it, and at the
// first and last instants a time.Time holds, for sizes under a second,
// that divide a day and that span days. Before 1970, ms − ms%size put an
// instant in the window after its own (issue 28).
func TestWindowStartFloors(t *testing.T) {
	sizes := []time.Duration{time.Millisecond, 3 * time.Millisecond, 1600 * time.Millisecond, time.Second,
		10 * time.Second, time.Minute, time.Hour, 6 * time.Hour, 24 * time.Hour, 48 * time.Hour, 7 * 24 * time.Hour, 106_751 * 24 * time.Hour}
	epoch := time.Unix(0, 0).UTC()
	// Near the first and last instants whose Unix seconds fit an int64:
	// far enough in that the windows of the longest size start and end
	// there too.
	first := time.Unix(math.MinInt64+1e10, 0).UTC()
	last := time.Unix(math.MaxInt64-62_135_596_800-1e10, 999_999_999).UTC()
	for _, size := range sizes {
		w := Window{Size: size}
		if err := w.check(); err != nil {
			t.Fatalf("%v: %v", w, err)
		}
		instants := []time.Time{first, first.Add(size), last, last.Add(-size), time.Date(294_247, 1, 10, 4, 0, 54, 775_807_000, time.UTC)}
		for k := int64(-3); k <= 3; k++ {
			edge := epoch.Add(time.Duration(k) * size)
			for _, d := range []time.Duration{-time.Millisecond, -time.Nanosecond, 0, time.Nanosecond, 500 * time.Microsecond, time.Millisecond} {
				instants = append(instants, edge.Add(d))
			}
		}
		s := big.NewInt(int64(size))
		for _, at := range instants {
			want := epochNanos(at)
			mod := new(big.Int).Mod(want, s) // Euclidean: never negative
			want.Sub(want, mod)
			got := w.start(at)
			if epochNanos(got).Cmp(want) != 0 || got.Location() != time.UTC {
				t.Errorf("%v.start(%v) = %v, want %v ns after the epoch", w, at.Format(time.RFC3339Nano), got.Format(time.RFC3339Nano), want)
			}
		}
	}
	// The instant: half a second before 1970, in windows of 1s.
	at := time.Date(1969, 12, 31, 23, 59, 59, 500_000_000, time.UTC)
	if got := (Window{Size: time.Second}).start(at); !got.Equal(epoch.Add(-time.Second)) {
		t.Errorf("start(%v) = %v, want 1969-12-31T23:59:59Z", at, got)
	}
}

// TestNoneOf checks that noneOf's pattern, fully matched as Bigtable
// matches family names, accepts every name but the given ones.
func TestNoneOf(t *testing.T) {
	sets := [][]string{
		{"f"},
		{"clicks"},
		{"a", "ab", "abc"},
		{"sess", "session", "s"},
		{"a-b", "a.b", "a_b", "A9"},
	}
	alphabet := []byte("abcsAZ9-._x")
	rng := randv1.New(randv1.NewSource(1))
	for _, set := range sets {
		re := regexp.MustCompile("^(?:" + noneOf(set) + ")$")
		in := map[string]bool{}
		probes := []string{"", "x"}
		for _, n := range set {
			in[n] = true
			probes = append(probes, n, n+"x", n[:len(n)-1], "x"+n, n+"\n")
		}
		for i := 0; i < 2000; i++ {
			b := make([]byte, rng.Intn(8))
			for j := range b {
				b[j] = alphabet[rng.Intn(len(alphabet))]
			}
			probes = append(probes, string(b))
		}
		for _, p := range probes {
			if got := re.MatchString(p); got == in[p] {
				t.Errorf("noneOf(%q) = %s: matches %q = %v want %v", set, noneOf(set), p, got, !in[p])
			}
		}
	}
}

// ApplyRow and ApplyBatch build each change as it is written, without a
// recipe. These tests check that they build exactly what Apply and
// ApplyBulk build from the same changes recorded as recipes: the same
// bigtable.Mutation, count and error, on tables with and without write
// times and a read margin.

// capturedTable is a TableAPI that keeps the rows and mutations it is
// handed (testkit.Captured, which this package cannot import).
type capturedTable struct {
	bigtable.TableAPI
	Rows []string
	Muts []*bigtable.Mutation
}

func (c *capturedTable) Apply(_ context.Context, row string, m *bigtable.Mutation, _ ...bigtable.ApplyOption) error {
	c.Rows, c.Muts = append(c.Rows, row), append(c.Muts, m)
	return nil
}

func (c *capturedTable) ApplyBulk(_ context.Context, rows []string, muts []*bigtable.Mutation, _ ...bigtable.ApplyOption) ([]error, error) {
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
func directTables(t *testing.T) (now time.Time, tables map[string]*Table, apis map[string]*capturedTable) {
	now = time.Date(2030, 4, 30, 9, 0, 0, 123456789, time.UTC)
	families := map[string]Strategy{
		"f": OneSecond(),
		"d": DefaultExpiration(time.Hour),
		"s": SequenceNumbers(2),
		"q": Move{To: SequenceNumbers(2), Start: now.Truncate(time.Millisecond).Add(-time.Hour)}, // supersedes the old cells
	}
	tables, apis = map[string]*Table{}, map[string]*capturedTable{}
	for name, opts := range map[string][]Option{
		"plain":       {OtherFamilies("u")},
		"undeclared":  nil,
		"write times": {OtherFamilies("u"), RecordWriteTime()},
		"margin":      {OtherFamilies("u"), WithReadMargin(time.Minute)},
	} {
		api := &capturedTable{}
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
	api := &capturedTable{}
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

// TestConstsWrittenOut checks the exported constants whose values are
// written out for the documentation against the expressions they stand
// for, so that the two cannot drift apart.
func TestConstsWrittenOut(t *testing.T) {
	if WriteTimePrefix != reservedFrom+"wt:" {
		t.Errorf("WriteTimePrefix = %q, want reservedFrom + \"wt:\" = %q", WriteTimePrefix, reservedFrom+"wt:")
	}
	if MaxTimestamp != rules.MaxTimestamp {
		t.Errorf("MaxTimestamp = %d, want rules.MaxTimestamp = %d", MaxTimestamp, rules.MaxTimestamp)
	}
}
