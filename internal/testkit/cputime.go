package testkit

import (
	"testing"
	"time"
)

// CPUTime returns the user and system CPU time of the process, and true;
// where that is not measured (outside Unix), zero and false: the
// benchmarks then report wall time only.
func CPUTime(tb testing.TB) (time.Duration, bool) { return cpuTime(tb) }
