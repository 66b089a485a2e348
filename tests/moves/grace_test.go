package moves_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/testkit"
)

// TestGrace checks that a grace changes the family's GC policy and its
// name, and nothing the library reads or writes by: timestamps, filters
// and expiries are the strategy's own.
func TestGrace(t *testing.T) {
	d := 48 * time.Hour
	for _, tt := range []struct {
		graced, plain ttl.Strategy
		name, gc      string
	}{
		{ttl.Grace(ttl.OneSecond(), 10*time.Minute), ttl.OneSecond(), "Grace(OneSecond(), 10m0s)", "age() > 10m"},
		{ttl.Grace(ttl.OneSecond(), time.Second), ttl.OneSecond(), "Grace(OneSecond(), 1s)", "age() > 1000000"},
		{ttl.Grace(ttl.DefaultExpiration(d), time.Hour), ttl.DefaultExpiration(d), "Grace(DefaultExpiration(48h0m0s), 1h0m0s)", "age() > 49h"},
		{ttl.Grace(ttl.Counter(ttl.OneSecond()), time.Hour), ttl.Counter(ttl.OneSecond()), "Counter(Grace(OneSecond(), 1h0m0s))", "age() > 1h"},
		{ttl.Grace(ttl.Grace(ttl.OneSecond(), time.Hour), 2*time.Hour), ttl.OneSecond(), "Grace(OneSecond(), 2h0m0s)", "age() > 2h"},
	} {
		s := tt.graced
		if got := s.String(); got != tt.name {
			t.Errorf("String() = %q want %q", got, tt.name)
		}
		if got := s.GCPolicy().String(); got != tt.gc {
			t.Errorf("%v.GCPolicy() = %q want %q", s, got, tt.gc)
		}
		for _, life := range []ttl.Lifetime{ttl.For(time.Hour), ttl.Until(testkit.Base.Add(time.Minute)), ttl.Forever, ttl.Default, ttl.Version(1)} {
			got, err := s.Timestamp(testkit.Base, life)
			want, wantErr := tt.plain.Timestamp(testkit.Base, life)
			if got != want || (err == nil) != (wantErr == nil) {
				t.Errorf("%v.Timestamp(base, %v) = %d, %v want %d, %v", s, life, got, err, want, wantErr)
			}
		}
		if got, want := s.Filter(testkit.Base).String(), tt.plain.Filter(testkit.Base).String(); got != want {
			t.Errorf("%v.Filter(base) = %s want %s", s, got, want)
		}
		ts := bigtable.Time(testkit.Base)
		got, ok := s.ExpiresAt(ts)
		want, wantOK := tt.plain.ExpiresAt(ts)
		if !got.Equal(want) || ok != wantOK {
			t.Errorf("%v.ExpiresAt(base) = %v, %v want %v, %v", s, got, ok, want, wantOK)
		}
	}
	if ttl.Grace(ttl.OneSecond(), 0) != ttl.OneSecond() {
		t.Error("Grace(OneSecond(), 0) != OneSecond()")
	}
	if ttl.Grace(ttl.Counter(ttl.OneSecond()), time.Hour) != ttl.Counter(ttl.Grace(ttl.OneSecond(), time.Hour)) {
		t.Error("the grace of a counter is not the counter of the grace")
	}
	if ttl.Grace(ttl.OneSecond(), time.Hour) == ttl.Grace(ttl.OneSecond(), 2*time.Hour) {
		t.Error("different graces made equal strategies")
	}
}

// TestInvalidGrace checks that a grace the strategy cannot have, or one
// that is negative or not whole seconds, makes an invalid strategy, whose
// message names it.
func TestInvalidGrace(t *testing.T) {
	move := ttl.Move{To: ttl.OneSecond(), Start: testkit.Base}
	for _, tt := range []struct {
		s    ttl.Strategy
		name string
	}{
		{ttl.Grace(ttl.OneSecond(), -time.Second), "Grace(OneSecond(), -1s)"},
		{ttl.Grace(ttl.OneSecond(), 1500*time.Millisecond), "Grace(OneSecond(), 1.5s)"},
		{ttl.Grace(ttl.DefaultExpiration(time.Hour), -time.Hour), "Grace(DefaultExpiration(1h0m0s), -1h0m0s)"},
		{ttl.Grace(ttl.Counter(ttl.OneSecond()), time.Millisecond), "Counter(Grace(OneSecond(), 1ms))"},
		{ttl.Grace(ttl.SequenceNumbers(3), time.Hour), "Grace(SequenceNumbers(3), 1h0m0s)"},
		{ttl.Grace(nil, time.Hour), "Grace(nil, 1h0m0s)"},
		{ttl.Grace(move, time.Hour), "Grace(" + move.String() + ", 1h0m0s)"},
		{ttl.Grace(ttl.Counter(ttl.SequenceNumbers(3)), time.Hour), "Counter(Grace(SequenceNumbers(3), 1h0m0s))"},
	} {
		s := tt.s
		if s.String() != tt.name {
			t.Errorf("String() = %q want %q", s.String(), tt.name)
		}
		for _, life := range []ttl.Lifetime{ttl.Default, ttl.For(time.Hour), ttl.Forever} {
			ts, err := s.Timestamp(testkit.Base, life)
			if !errors.Is(err, ttl.ErrInvalidStrategy) {
				t.Errorf("%v.Timestamp(base, %v) = %d, %v want ErrInvalidStrategy", s, life, ts, err)
			} else if !strings.Contains(err.Error(), strings.TrimSuffix(strings.TrimPrefix(tt.name, "Counter("), ")")) {
				t.Errorf("%v.Timestamp: %v does not name the strategy", s, err)
			}
		}
		if got := s.Filter(testkit.Base).String(); got != bigtable.BlockAllFilter().String() {
			t.Errorf("%v.Filter(base) = %s want %s", s, got, bigtable.BlockAllFilter())
		}
		if got := s.GCPolicy().String(); got != bigtable.NoGcPolicy().String() {
			t.Errorf("%v.GCPolicy() = %q want no GC", s, got)
		}
		if _, ok := s.ExpiresAt(bigtable.Time(testkit.Base)); ok {
			t.Errorf("%v.ExpiresAt reports an expiry", s)
		}
		if _, ok := s.Versions(); ok {
			t.Errorf("%v.Versions reports versions", s)
		}
	}
}

// TestMoveGrace checks that a move keeps the longer grace of its sides on
// top of the age its rules need.
func TestMoveGrace(t *testing.T) {
	d := 48 * time.Hour
	start := testkit.Base.Add(time.Hour)
	for _, tt := range []struct {
		m  ttl.Move
		gc string
	}{
		{ttl.Move{From: ttl.DefaultExpiration(d), To: ttl.OneSecond(), Start: start}, "age() > 2d"},
		{ttl.Move{From: ttl.Grace(ttl.DefaultExpiration(d), time.Hour), To: ttl.OneSecond(), Start: start}, "age() > 49h"},
		{ttl.Move{From: ttl.DefaultExpiration(d), To: ttl.Grace(ttl.OneSecond(), 2*time.Hour), Start: start}, "age() > 50h"},
		{ttl.Move{From: ttl.Grace(ttl.DefaultExpiration(d), 3*time.Hour), To: ttl.Grace(ttl.OneSecond(), 2*time.Hour), Start: start}, "age() > 51h"},
		{ttl.Move{To: ttl.Grace(ttl.OneSecond(), time.Hour), Start: start, Old: ttl.For(time.Hour)}, "age() > 2h"},
	} {
		if got := tt.m.GCPolicy().String(); got != tt.gc {
			t.Errorf("%v.GCPolicy() = %q want %q", tt.m, got, tt.gc)
		}
		if _, err := tt.m.Timestamp(testkit.Base, ttl.For(time.Minute)); err != nil {
			t.Errorf("%v: %v", tt.m, err)
		}
	}
}
