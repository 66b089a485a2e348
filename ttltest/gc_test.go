package ttltest_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/ttltest"
)

// managed is a managed family for tests of other families' GC: a Table
// needs one.
var managed = map[string]ttl.Strategy{"sess": ttl.OneSecond()}

// put writes raw cells to family:column of row, one per timestamp, each
// an offset from DefaultStart.
func put(t *testing.T, env *ttltest.Env, row, family, column string, offsets ...time.Duration) {
	t.Helper()
	m := bigtable.NewMutation()
	for _, d := range offsets {
		m.Set(family, column, bigtable.Time(ttltest.DefaultStart.Add(d)), []byte("v"))
	}
	if err := env.Raw.Apply(context.Background(), row, m); err != nil {
		t.Fatal(err)
	}
}

// stored lists the cells stored in family of row, raw, as
// "column@offset" (the offset of the timestamp from DefaultStart), by
// column then newest first.
func stored(t *testing.T, env *ttltest.Env, row, family string) string {
	t.Helper()
	r, err := env.Raw.ReadRow(context.Background(), row, bigtable.RowFilter(bigtable.FamilyFilter(family)))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, it := range r[family] {
		_, col, _ := strings.Cut(it.Column, ":")
		out = append(out, fmt.Sprintf("%s@%v", col, it.Timestamp.Time().Sub(ttltest.DefaultStart)))
	}
	sort.SliceStable(out, func(i, j int) bool { return strings.Split(out[i], "@")[0] < strings.Split(out[j], "@")[0] })
	return strings.Join(out, " ")
}

func check(t *testing.T, env *ttltest.Env, row, family, when, want string) {
	t.Helper()
	if got := stored(t, env, row, family); got != want {
		t.Errorf("%s: stored %q, want %q", when, got, want)
	}
}

// TestMaxAge: GC may delete a cell whose timestamp is before now − age,
// not at it; FastForward deletes it a GC lag later, CollectGarbage at once.
func TestMaxAge(t *testing.T) {
	env := ttltest.New(t, managed, ttltest.WithFamily("age", bigtable.MaxAgePolicy(time.Hour)))
	put(t, env, "r", "age", "c", -time.Hour-time.Millisecond, -time.Hour, 0)
	env.FastForward(0)
	check(t, env, "r", "age", "FastForward(0)", "c@0s c@-1h0m0s c@-1h0m0.001s")
	env.CollectGarbage()
	check(t, env, "r", "age", "CollectGarbage", "c@0s c@-1h0m0s")

	// The cell at 0s is collectable from 1h on, strictly after: stored a
	// week after that, gone a millisecond later.
	env.FastForward(time.Hour + ttltest.DefaultGCLag)
	check(t, env, "r", "age", "1h + a week", "c@0s")
	env.FastForward(time.Millisecond)
	check(t, env, "r", "age", "1h + a week + 1ms", "")
}

// TestLagCountsFromTheWrite: a cell written with an old timestamp is
// collectable from its write on, so it stays a GC lag after the write.
func TestLagCountsFromTheWrite(t *testing.T) {
	env := ttltest.New(t, managed, ttltest.WithFamily("age", bigtable.MaxAgePolicy(time.Hour)))
	env.FastForward(30 * 24 * time.Hour)
	put(t, env, "r", "age", "c", 0) // a month old when written
	env.FastForward(ttltest.DefaultGCLag - time.Millisecond)
	check(t, env, "r", "age", "a week less 1ms after the write", "c@0s")
	env.FastForward(time.Millisecond)
	check(t, env, "r", "age", "a week after the write", "")
}

// TestMaxVersions: GC may delete every version but the newest n of each
// column; a version is collectable from the write of the n-th newer one.
func TestMaxVersions(t *testing.T) {
	env := ttltest.New(t, managed, ttltest.WithFamily("v", bigtable.MaxVersionsPolicy(2)))
	put(t, env, "r", "v", "a", 1*time.Millisecond, 2*time.Millisecond, 3*time.Millisecond, 4*time.Millisecond)
	put(t, env, "r", "v", "b", time.Millisecond)
	env.CollectGarbage()
	check(t, env, "r", "v", "CollectGarbage", "a@4ms a@3ms b@1ms")

	env2 := ttltest.New(t, managed, ttltest.WithFamily("v", bigtable.MaxVersionsPolicy(1)))
	put(t, env2, "r", "v", "a", time.Millisecond)
	env2.FastForward(3 * 24 * time.Hour)
	put(t, env2, "r", "v", "a", 2*time.Millisecond) // the version that makes the first excess
	env2.FastForward(ttltest.DefaultGCLag - time.Millisecond)
	check(t, env2, "r", "v", "a week less 1ms after the newer version", "a@2ms a@1ms")
	env2.FastForward(time.Millisecond)
	check(t, env2, "r", "v", "a week after the newer version", "a@2ms")
}

// TestUnionAndIntersection: a union deletes what any of its rules may, an
// intersection what all of them may (which the emulator's own GC
// ignores); no policy deletes nothing.
func TestUnionAndIntersection(t *testing.T) {
	env := ttltest.New(t, managed,
		ttltest.WithFamily("or", bigtable.UnionPolicy(bigtable.MaxAgePolicy(time.Hour), bigtable.MaxVersionsPolicy(2))),
		ttltest.WithFamily("and", bigtable.IntersectionPolicy(bigtable.MaxAgePolicy(time.Hour), bigtable.MaxVersionsPolicy(1))),
		ttltest.WithFamily("never", nil))
	put(t, env, "r", "or", "a", 0, -10*time.Minute, -20*time.Minute) // the third by versions
	put(t, env, "r", "or", "b", 0, -2*time.Hour)                     // the second by age
	put(t, env, "r", "and", "a", 0, -2*time.Hour, -3*time.Hour)      // old and excess
	put(t, env, "r", "and", "b", -2*time.Hour)                       // old, not excess
	put(t, env, "r", "and", "c", 0, -10*time.Minute)                 // excess, not old
	put(t, env, "r", "never", "a", -100*time.Hour, -200*time.Hour)
	env.CollectGarbage()
	check(t, env, "r", "or", "union", "a@0s a@-10m0s b@0s")
	check(t, env, "r", "and", "intersection", "a@0s b@-2h0m0s c@0s c@-10m0s")
	check(t, env, "r", "never", "no GC", "a@-100h0m0s a@-200h0m0s")
}

// TestPolicyChangedByTheTest: a collection applies the policy the table
// has when it runs.
func TestPolicyChangedByTheTest(t *testing.T) {
	env := ttltest.New(t, managed, ttltest.WithFamily("f", nil))
	put(t, env, "r", "f", "a", 0, time.Millisecond)
	env.CollectGarbage()
	check(t, env, "r", "f", "no GC", "a@1ms a@0s")
	if err := env.Admin.SetGCPolicy(context.Background(), env.Name, "f", bigtable.MaxVersionsPolicy(1)); err != nil {
		t.Fatal(err)
	}
	env.CollectGarbage()
	check(t, env, "r", "f", "maxversions=1", "a@1ms")
}

// TestStrategies: each strategy's family is created with its GC policy,
// and its cells are collected by it: expired cells (hidden at once from
// the Table) a lag later, live and Forever cells never.
func TestStrategies(t *testing.T) {
	ctx := context.Background()
	families := map[string]ttl.Strategy{
		"one":  ttl.OneSecond(),
		"def":  ttl.DefaultExpiration(time.Hour),
		"seq":  ttl.SequenceNumbers(2),
		"hits": ttl.Counter(ttl.DefaultExpiration(time.Hour)),
	}
	env := ttltest.New(t, families)
	info, err := env.Admin.TableInfo(ctx, env.Name)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range info.FamilyInfos {
		if want := families[f.Name].GCPolicy().String(); f.GCPolicy != want {
			t.Errorf("family %q: GC policy %q, want %q", f.Name, f.GCPolicy, want)
		}
		if _, agg := f.ValueType.(bigtable.AggregateType); agg != (f.Name == "hits") {
			t.Errorf("family %q: value type %v", f.Name, f.ValueType)
		}
	}
	m := ttl.NewMutation()
	m.Set("one", "short", []byte("v"), ttl.For(time.Minute))
	m.Set("one", "ever", []byte("v"), ttl.Forever)
	m.Set("def", "d", []byte("v"), ttl.Default)
	for v := int64(1); v <= 3; v++ {
		m.Set("seq", "s", []byte("v"), ttl.Version(v))
	}
	m.Add("hits", "h", 5, ttl.Window{Size: time.Minute})
	if err := env.Table.Apply(ctx, "r", m); err != nil {
		t.Fatal(err)
	}
	live := func(when, want string) {
		t.Helper()
		row, err := env.Table.ReadRow(ctx, "r")
		if err != nil {
			t.Fatal(err)
		}
		var cols []string
		for _, items := range row {
			for _, it := range items {
				cols = append(cols, it.Column)
			}
		}
		sort.Strings(cols)
		if got := strings.Join(cols, " "); got != want {
			t.Errorf("%s: the Table reads %q, want %q", when, got, want)
		}
	}
	raw := func(when string, want int) {
		t.Helper()
		row, err := env.Raw.ReadRow(ctx, "r")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, items := range row {
			n += len(items)
		}
		if n != want {
			t.Errorf("%s: %d cells stored, want %d: %v", when, n, want, row)
		}
	}
	live("at once", "def:d hits:h one:ever one:short seq:s seq:s")
	raw("at once", 7)
	env.FastForward(2 * time.Hour)
	live("2h later", "one:ever seq:s seq:s")
	raw("2h later", 7)
	env.FastForward(ttltest.DefaultGCLag)
	live("a week later", "one:ever seq:s seq:s")
	raw("a week later", 3)
}

// TestClock: the clock starts at DefaultStart or WithStart, moves only by
// FastForward, and is the Table's, whatever clock the table options name.
func TestClock(t *testing.T) {
	ctx := context.Background()
	env := ttltest.New(t, managed, ttltest.WithTableOptions(ttl.WithClock(time.Now)))
	if got := env.Now(); !got.Equal(ttltest.DefaultStart) {
		t.Fatalf("Now: %v, want DefaultStart", got)
	}
	env.FastForward(90 * time.Minute)
	if got, want := env.Now(), ttltest.DefaultStart.Add(90*time.Minute); !got.Equal(want) {
		t.Fatalf("Now after FastForward(90m): %v, want %v", got, want)
	}
	if err := env.Table.Apply(ctx, "r", setFor(time.Minute)); err != nil {
		t.Fatal(err)
	}
	check(t, env, "r", "sess", "a write For(1m)", "c@1h31m0s")

	start := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	env2 := ttltest.New(t, managed, ttltest.WithStart(start), ttltest.WithTableName("sessions"))
	if !env2.Now().Equal(start) || env2.Name != "sessions" {
		t.Fatalf("WithStart, WithTableName: Now %v, Name %q", env2.Now(), env2.Name)
	}
	if err := env2.Table.Apply(ctx, "r", setFor(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if row, err := env2.Client.Open("sessions").ReadRow(ctx, "r"); err != nil || row["sess"][0].Timestamp != bigtable.Time(start.Add(time.Minute)) {
		t.Fatalf("a write For(1m) on a clock started at %v: %v, %v", start, row, err)
	}
}

func setFor(d time.Duration) *ttl.Mutation {
	m := ttl.NewMutation()
	m.Set("sess", "c", []byte("v"), ttl.For(d))
	return m
}
