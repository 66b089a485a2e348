package testkit

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"slices"
	"time"
)

// What the scale tests measure: how long a job took and what it cost the
// client's heap, sampled while it runs.

// Usage is what one run of a job cost the client.
type Usage struct {
	Elapsed   time.Duration
	Input     uint64 // live heap of the job's input, measured apart; 0 for none
	Peak      uint64 // highest heap in use (live and not yet collected) above the start
	PeakLive  uint64 // highest live heap a GC found, above the live heap at the start
	Allocated uint64 // bytes allocated
}

// heapMetrics are the heap in use (HeapAlloc), live as of the last GC,
// and allocated in all.
var heapMetrics = []string{"/memory/classes/heap/objects:bytes", "/gc/heap/live:bytes", "/gc/heap/allocs:bytes"}

// readHeap reads heapMetrics into s.
func readHeap(s []metrics.Sample) (inUse, live, allocs uint64) {
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64(), s[2].Value.Uint64()
}

// Measure runs job and returns its time and the client's heap over it,
// sampled every millisecond from a goroutine of its own (which ends
// before Measure returns), after a GC.
func Measure(job func()) Usage {
	samples := make([]metrics.Sample, len(heapMetrics))
	for i, name := range heapMetrics {
		samples[i].Name = name
	}
	runtime.GC()
	inUse0, live0, allocs0 := readHeap(samples)
	stop, done := make(chan struct{}), make(chan [2]uint64)
	go func() {
		own := slices.Clone(samples)
		var peak, peakLive uint64
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			inUse, live, _ := readHeap(own)
			peak, peakLive = max(peak, inUse), max(peakLive, live)
			select {
			case <-stop:
				done <- [2]uint64{peak, peakLive}
				return
			case <-tick.C:
			}
		}
	}()
	start := time.Now()
	job()
	elapsed := time.Since(start)
	close(stop)
	peaks := <-done
	_, _, allocs := readHeap(samples)
	above := func(v, base uint64) uint64 {
		if v < base {
			return 0
		}
		return v - base
	}
	return Usage{Elapsed: elapsed, Peak: above(peaks[0], inUse0), PeakLive: above(peaks[1], live0), Allocated: allocs - allocs0}
}

// Medians returns the median of each field over runs, which must not be
// empty.
func Medians(runs []Usage) Usage {
	med := func(field func(Usage) uint64) uint64 {
		vs := make([]uint64, len(runs))
		for i, r := range runs {
			vs[i] = field(r)
		}
		slices.Sort(vs)
		return vs[len(vs)/2]
	}
	return Usage{
		Elapsed:   time.Duration(med(func(u Usage) uint64 { return uint64(u.Elapsed) })),
		Input:     med(func(u Usage) uint64 { return u.Input }),
		Peak:      med(func(u Usage) uint64 { return u.Peak }),
		PeakLive:  med(func(u Usage) uint64 { return u.PeakLive }),
		Allocated: med(func(u Usage) uint64 { return u.Allocated }),
	}
}

// MiB prints bytes in mebibytes: "12.5 MiB".
func MiB(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
