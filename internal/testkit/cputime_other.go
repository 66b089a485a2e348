//go:build !unix

package testkit

import (
	"testing"
	"time"
)

// cpuTime is CPUTime where the process's CPU time is not measured.
func cpuTime(testing.TB) (time.Duration, bool) { return 0, false }
