package scan

import (
	"math"
)

// Estimates are a sample's estimates of what the whole table holds, each
// with its 95% confidence interval (see Options.Sample).
type Estimates struct {
	// RowsSeen, CellsSeen, RowsReturned and CellsReturned estimate the
	// table's counts of Stats' fields of the same names.
	RowsSeen      Interval `json:"rows_seen"`
	CellsSeen     Interval `json:"cells_seen"`
	RowsReturned  Interval `json:"rows_returned"`
	CellsReturned Interval `json:"cells_returned"`
	// Scale is the factor that scales counts of the ranges read to the
	// table: the estimate of the cells seen over the cells the sample saw.
	// Work that counts more than Stats does (an audit's families, say)
	// scales its counts by it.
	Scale float64 `json:"scale"`
}

// An Interval is an estimate of a count with its 95% confidence interval:
// in about 95 samples in 100 the interval holds the true count. Low is
// never below what the sample itself read.
type Interval struct {
	Estimate int64 `json:"estimate"`
	Low      int64 `json:"low"`
	High     int64 `json:"high"`
}

// Margin returns the interval's half width as a fraction of the estimate
// (0.04 for ±4%), or 0 for an estimate of 0.
func (i Interval) Margin() float64 {
	if i.Estimate == 0 {
		return 0
	}
	return float64(i.High-i.Low) / 2 / float64(i.Estimate)
}

// unitCounts is what one range of a sample read: its stratum (the shard
// it belongs to), how many ranges the stratum was split into, and its
// counts, in the order of the Estimates' fields.
type unitCounts struct {
	stratum, ranges int
	y               [4]float64
}

// estimate returns the estimates from the ranges read, every range of the
// sample: a stratified estimate, each stratum's total its ranges' mean
// times its number of ranges; the variance, each stratum's sample
// variance of its ranges (with the finite population correction), summed;
// the interval, Student's t with a degree of freedom per stratum sampled.
func estimate(units []unitCounts) *Estimates {
	type stratum struct {
		ranges, n int
		sum, sq   [4]float64
	}
	strata := map[int]*stratum{}
	var read [4]float64
	for _, u := range units {
		s := strata[u.stratum]
		if s == nil {
			s = &stratum{ranges: u.ranges}
			strata[u.stratum] = s
		}
		s.n++
		for k, y := range u.y {
			s.sum[k] += y
			s.sq[k] += y * y
			read[k] += y
		}
	}
	var total, variance [4]float64
	df := 0
	for _, s := range strata {
		n, N := float64(s.n), float64(s.ranges)
		if s.n < s.ranges && s.n > 1 {
			df += s.n - 1
		}
		for k := range total {
			total[k] += N * s.sum[k] / n
			if s.n < 2 || s.n >= s.ranges {
				continue
			}
			mean := s.sum[k] / n
			s2 := (s.sq[k] - n*mean*mean) / (n - 1)
			variance[k] += N * N * (1 - n/N) * max(0, s2) / n
		}
	}
	t := tQuantile(df)
	interval := func(k int) Interval {
		half := t * math.Sqrt(variance[k])
		return Interval{
			Estimate: int64(math.Round(total[k])),
			Low:      int64(math.Round(max(read[k], total[k]-half))),
			High:     int64(math.Round(total[k] + half)),
		}
	}
	e := &Estimates{RowsSeen: interval(0), CellsSeen: interval(1), RowsReturned: interval(2), CellsReturned: interval(3), Scale: 1}
	switch {
	case read[1] > 0:
		e.Scale = total[1] / read[1]
	case read[0] > 0:
		e.Scale = total[0] / read[0]
	}
	return e
}

// tQuantile returns the 97.5th percentile of Student's t with df degrees
// of freedom (Cornish–Fisher's expansion about the normal's 1.96, within
// 0.2% from 5 degrees on), the normal's for df 0 (no variance to scale).
func tQuantile(df int) float64 {
	const z = 1.959963984540054
	if df == 0 {
		return z
	}
	if df < 5 {
		return [...]float64{1: 12.706204736, 2: 4.302652730, 3: 3.182446305, 4: 2.776445105}[df]
	}
	d := float64(df)
	return z + (z*z*z+z)/(4*d) + (5*z*z*z*z*z+16*z*z*z+3*z)/(96*d*d) +
		(3*math.Pow(z, 7)+19*math.Pow(z, 5)+17*z*z*z-15*z)/(384*d*d*d)
}
