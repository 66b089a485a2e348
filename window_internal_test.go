package ttl

import (
	"math"
	"math/big"
	"testing"
	"time"
)

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
