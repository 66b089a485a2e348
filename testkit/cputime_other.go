//go:build !unix

package testkit

import (
	"testing"
	"time"
)

// CPUTime reports, with false, that the process's CPU time is not
// measured here: the benchmarks then report wall time only.
func CPUTime(testing.TB) (time.Duration, bool) { return 0, false }
