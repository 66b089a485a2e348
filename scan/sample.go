package scan

import (
	"math"
	"math/rand/v2"
	"strings"
)

// How a sample is drawn (Options.Sample). A table's shards differ in size
// (their bounds are SampleRowKeys' keys, which Bigtable places by bytes
// and the emulator at random rows), so a sample of whole shards scaled
// by their number is as far off as the shards picked are unlike the rest,
// and says nothing of how far. Instead every shard is a stratum: it is
// split into equal ranges of row keys (keys interpolated between its
// bounds), and two of them, picked at random, are read. Each stratum's
// total is estimated from its two ranges, the table's is their sum, and
// the spread of the two ranges within each stratum gives the estimate's
// variance: a 95% interval that holds whatever the shards' sizes (see
// estimate).

// perStratum is how many ranges of each shard a sample reads.
const perStratum = 2

// A unit is one range of a sample: the shard it belongs to, and how many
// ranges that shard was split into.
type unit struct {
	Shard
	stratum int
	ranges  int
}

// sampleUnits returns the ranges a sample of fraction of shards reads:
// each shard split into ranges (at most 2/fraction, fewer when its
// bounds leave no key between them), of which perStratum picked with r,
// or the whole shard when it could not be split into more. Keys are
// interpolated in the alphabet of the shards' bounds.
func sampleUnits(shards []Shard, fraction float64, r *rand.Rand) []unit {
	want := max(perStratum, int(perStratum/fraction))
	a := newAlphabet(shards)
	var units []unit
	for h, s := range shards {
		keys := splitKeys(a, s.Start, s.End, want)
		if len(keys) < want/2 {
			// Bounds outside the alphabet (the first shard's rows
			// below every bound, say): every byte value.
			keys = splitKeys(alphabet{}, s.Start, s.End, want)
		}
		ranges := len(keys) + 1
		bounds := append(append([]string{s.Start}, keys...), s.End)
		pick := []int{0}
		if ranges > perStratum {
			pick = r.Perm(ranges)[:perStratum]
		} else if ranges == perStratum {
			pick = []int{0, 1}
		}
		for _, i := range pick {
			units = append(units, unit{Shard: Shard{Start: bounds[i], End: bounds[i+1]}, stratum: h, ranges: ranges})
		}
	}
	return units
}

// An alphabet is the range of bytes the table's keys use at each
// position, as its shards' bounds show it: decimal digits where keys
// count up in decimal, and so on. Interpolating keys in it, rather than
// over every byte value, splits a shard into ranges of about equal rows
// when its keys are spread evenly in their own alphabet.
type alphabet struct {
	lo, hi []byte // per position; a position no key reaches is all bytes
}

// maxPositions is how many positions of keys an alphabet keeps.
const maxPositions = 64

// newAlphabet returns the alphabet of the shards' bounds.
func newAlphabet(shards []Shard) alphabet {
	var a alphabet
	for _, s := range shards {
		for _, k := range []string{s.Start, s.End} {
			for i := 0; i < len(k) && i < maxPositions; i++ {
				if i == len(a.lo) {
					a.lo, a.hi = append(a.lo, k[i]), append(a.hi, k[i])
				}
				a.lo[i], a.hi[i] = min(a.lo[i], k[i]), max(a.hi[i], k[i])
			}
		}
	}
	return a
}

// radix returns the lowest byte and the number of bytes at position i.
func (a alphabet) radix(i int) (lo byte, n float64) {
	if i >= len(a.lo) {
		return 0, 256
	}
	return a.lo[i], float64(a.hi[i]) - float64(a.lo[i]) + 1
}

// value returns key's positions from offset as a number in the alphabet,
// over as many positions as make up to 2^52 values, each byte clamped to
// its position's range (a missing one is the lowest), and the positions
// used.
func (a alphabet) value(key string, offset int, top bool) (v float64, positions int) {
	span := 1.0
	for i := offset; span < 1<<44; i++ {
		lo, n := a.radix(i)
		d := 0.0
		switch {
		case top:
			d = n - 1
		case i < len(key):
			d = min(max(float64(key[i])-float64(lo), 0), n-1)
		}
		v = v*n + d
		span *= n
		positions++
	}
	return v, positions
}

// key returns the key of value v over positions from offset, after
// prefix.
func (a alphabet) key(prefix string, offset, positions int, v float64) string {
	b := make([]byte, positions)
	for j := positions - 1; j >= 0; j-- {
		lo, n := a.radix(offset + j)
		d := math.Mod(v, n)
		b[j] = lo + byte(d)
		v = (v - d) / n
	}
	return prefix + string(b)
}

// splitKeys returns up to n-1 row keys strictly between start and end
// ("" is the table's end), in increasing order, that split the key range
// into n about equal parts of the alphabet: the positions after the
// bounds' common prefix, read as a number in it, interpolated.
func splitKeys(a alphabet, start, end string, n int) []string {
	prefix := 0
	if end != "" {
		for prefix < len(start) && prefix < len(end) && start[prefix] == end[prefix] {
			prefix++
		}
	}
	lo, positions := a.value(start, prefix, false)
	hi, _ := a.value(end, prefix, end == "")
	var keys []string
	last := start
	for j := 1; j < n; j++ {
		k := a.key(start[:prefix], prefix, positions, math.Floor(lo+(hi-lo)*float64(j)/float64(n)))
		k = strings.TrimRight(k, "\x00")
		if k <= last || end != "" && k >= end {
			continue
		}
		keys = append(keys, k)
		last = k
	}
	return keys
}
