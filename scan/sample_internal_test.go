package scan

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestSplitKeys checks the keys that split a shard for a sample: strictly
// between its bounds, increasing, at most n-1, about equal steps for keys
// that count up, none where the bounds leave no room.
func TestSplitKeys(t *testing.T) {
	for _, tt := range []struct {
		start, end string
		n, want    int
	}{
		{"", "", 40, 39},
		{"row000000000", "row000200000", 40, 39},
		{"row000199000", "", 8, 7},
		{"", "r05", 8, 7},
		{"a", "a\x00", 8, 0},
		{"a", "b", 1, 0},
		{"\xff\xff\xff\xff\xff\xff\xff\xff\xff", "", 4, 0},
		{"k", "k\x00\x03", 4, 3},
		{"k", "k\x00\x00\x00\x00\x00\x00\x00\x03", 8, 0}, // beyond the positions interpolated
	} {
		keys := splitKeys(alphabet{}, tt.start, tt.end, tt.n)
		if len(keys) != tt.want {
			t.Errorf("splitKeys(%q, %q, %d) = %q, want %d keys", tt.start, tt.end, tt.n, keys, tt.want)
		}
		checkSplit(t, tt.start, tt.end, keys)
	}
	// Keys are split in equal steps of the bytes after the bounds'
	// common prefix.
	if got, want := splitKeys(alphabet{}, "k\x00", "k\x80", 8), []string{"k\x10", "k\x20", "k\x30", "k\x40", "k\x50", "k\x60", "k\x70"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("splitKeys(k\\x00, k\\x80, 8) = %q, want %q", got, want)
	}
	// Keys that count up in decimal are split in about equal steps of
	// rows, in the alphabet of the shards' bounds.
	var bounds []string
	for i := 0; i < 200000; i += 97 {
		bounds = append(bounds, fmt.Sprintf("row%09d", i))
	}
	decimal := newAlphabet(splitOn(bounds, MaxShards))
	for _, tt := range []struct {
		start, end string
		from, to   int
	}{
		{"row000012345", "row000012545", 12345, 12545},
		{"row000199000", "", 199000, 200000},
		{"", "row000000400", 0, 400},
	} {
		keys := splitKeys(decimal, tt.start, tt.end, 40)
		checkSplit(t, tt.start, tt.end, keys)
		step := float64(tt.to-tt.from) / 40
		for i, k := range keys {
			var n int
			if _, err := fmt.Sscanf(k, "row%d", &n); err != nil {
				t.Fatalf("key %q: %v", k, err)
			}
			if want := float64(tt.from) + float64(i+1)*step; math.Abs(float64(n)-want) > step/2+1 {
				t.Errorf("%q to %q: key %d is %q, want about row %.0f", tt.start, tt.end, i, k, want)
			}
		}
	}
	// Any bounds: random keys, random cuts.
	r := rand.New(rand.NewPCG(1, 2))
	randomKey := func() string {
		b := make([]byte, r.IntN(12))
		for i := range b {
			b[i] = byte(r.IntN(4)) * 85 // 0, 85, 170, 255: prefixes, zeros and 0xff
		}
		return string(b)
	}
	for range 5000 {
		a, b := randomKey(), randomKey()
		if b != "" && a >= b {
			a, b = b, a
		}
		if b != "" && a == b {
			continue
		}
		checkSplit(t, a, b, splitKeys(alphabet{}, a, b, 1+r.IntN(50)))
		checkSplit(t, a, b, splitKeys(newAlphabet([]Shard{{a, b}, {randomKey(), randomKey()}}), a, b, 1+r.IntN(50)))
	}
}

// checkSplit fails the test unless keys are strictly between start and
// end ("" the table's end), increasing.
func checkSplit(t *testing.T, start, end string, keys []string) {
	t.Helper()
	prev := start
	for _, k := range keys {
		if k <= prev || end != "" && k >= end {
			t.Fatalf("splitKeys(%q, %q) = %q: %q out of order or out of bounds", start, end, keys, k)
		}
		prev = k
	}
}

// TestSampleUnits checks a sample's ranges: two of each shard, within it,
// apart; the whole shard when it cannot be split; both halves when it
// splits in two.
func TestSampleUnits(t *testing.T) {
	shards := splitOn([]string{"b", "c", "c\x00"}, 100) // the third cannot be split
	r := rand.New(rand.NewPCG(3, 4))
	units := sampleUnits(shards, 0.05, r)
	per := map[int][]unit{}
	for _, u := range units {
		per[u.stratum] = append(per[u.stratum], u)
	}
	for h, s := range shards {
		us := per[h]
		switch {
		case s.Start == "c":
			if len(us) != 1 || us[0].Shard != s || us[0].ranges != 1 {
				t.Errorf("shard %v: %+v, want the whole shard, alone", s, us)
			}
			continue
		case len(us) != 2 || us[0].ranges != 40:
			t.Errorf("shard %v: %+v, want 2 of 40 ranges", s, us)
			continue
		}
		for _, u := range us {
			if u.Start < s.Start || s.End != "" && (u.End > s.End || u.End == "") || u.End != "" && u.Start >= u.End {
				t.Errorf("shard %v: range %v outside it", s, u.Shard)
			}
		}
		if us[0].Shard == us[1].Shard {
			t.Errorf("shard %v: the same range twice: %v", s, us)
		}
	}
	// A fraction near 1 splits each shard in two and reads both.
	for _, u := range sampleUnits(shards[:1], 0.9, r) {
		if u.ranges != 2 {
			t.Errorf("fraction 0.9: %+v, want both halves", u)
		}
	}
}

// TestEstimateCoverage is the sample's statistical proof, on synthetic
// tables like the emulator's at 1M cells: 1,024 shards whose sizes vary
// as the emulator's do (each 1 to 3 runs of rows between keys it samples
// at random, one row in 100 a key: geometric runs), 5 cells a row, and
// rows spread over each shard's ranges unevenly (keys not counting up).
// Over many seeds, the 95% interval of a 5% sample holds the true count
// in about 95% of them, and is never wider than ±10%.
func TestEstimateCoverage(t *testing.T) {
	const (
		seeds    = 500
		shards   = 1024
		fraction = 0.05
	)
	ranges := int(perStratum / fraction)
	held, widest := 0, 0.0
	for seed := range uint64(seeds) {
		r := rand.New(rand.NewPCG(seed, 42))
		var units []unitCounts
		truth := 0.0
		for h := range shards {
			rows := 0.0
			for range 1 + r.IntN(3) {
				rows += math.Ceil(r.ExpFloat64() * 100)
			}
			// Rows over the ranges: each range's share drawn at random.
			w := make([]float64, ranges)
			sum := 0.0
			for j := range w {
				w[j] = 0.25 + r.Float64()
				sum += w[j]
			}
			for _, j := range r.Perm(ranges)[:perStratum] {
				y := math.Round(rows * w[j] / sum)
				units = append(units, unitCounts{stratum: h, ranges: ranges, y: [4]float64{y, 5 * y, y, 5 * y}})
			}
			for j := range w {
				truth += 5 * math.Round(rows*w[j]/sum)
			}
		}
		e := estimate(units)
		c := e.CellsSeen
		if float64(c.Low) <= truth && truth <= float64(c.High) {
			held++
		}
		widest = max(widest, c.Margin())
		if e.Scale <= 1 || c.Low > c.Estimate || c.Estimate > c.High {
			t.Fatalf("seed %d: %+v", seed, e)
		}
	}
	coverage := float64(held) / seeds
	t.Logf("coverage %.3f over %d seeds, widest ±%.1f%%", coverage, seeds, 100*widest)
	if coverage < 0.92 || coverage > 0.98 {
		t.Errorf("the 95%% interval held the truth in %.1f%% of %d samples", 100*coverage, seeds)
	}
	if widest > 0.10 {
		t.Errorf("an interval as wide as ±%.1f%%, want at most ±10%%", 100*widest)
	}
}

// TestEstimateExact checks the estimate of strata read in full (exact:
// no interval beyond the count), of a sample that read nothing (a scale
// of 1), and Student's t.
func TestEstimateExact(t *testing.T) {
	e := estimate([]unitCounts{
		{stratum: 0, ranges: 1, y: [4]float64{10, 20, 10, 20}},
		{stratum: 1, ranges: 2, y: [4]float64{5, 7, 5, 7}},
		{stratum: 1, ranges: 2, y: [4]float64{3, 1, 3, 1}},
	})
	if want := (Interval{Estimate: 28, Low: 28, High: 28}); e.CellsSeen != want || e.Scale != 1 || e.CellsSeen.Margin() != 0 {
		t.Errorf("strata read in full: %+v, want %+v and a scale of 1", e, want)
	}
	e = estimate([]unitCounts{{stratum: 0, ranges: 4, y: [4]float64{}}, {stratum: 0, ranges: 4}})
	if e.Scale != 1 || e.RowsSeen != (Interval{}) || e.RowsSeen.Margin() != 0 {
		t.Errorf("nothing read: %+v", e)
	}
	// Rows without cells (a filter that returns none) scale by rows.
	e = estimate([]unitCounts{{stratum: 0, ranges: 4, y: [4]float64{2, 0, 2, 0}}, {stratum: 0, ranges: 4, y: [4]float64{2, 0, 2, 0}}})
	if e.Scale != 2 || e.RowsSeen.Estimate != 8 {
		t.Errorf("rows only: %+v", e)
	}
	for df, want := range map[int]float64{0: 1.960, 1: 12.706, 2: 4.303, 3: 3.182, 5: 2.571, 10: 2.228, 30: 2.042, 1000: 1.962} {
		if got := tQuantile(df); math.Abs(got-want) > 0.005*want {
			t.Errorf("tQuantile(%d) = %.4f, want %.3f", df, got, want)
		}
	}
}
