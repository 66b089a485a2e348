//go:build !unix

package ttl_test

import (
	"testing"
	"time"
)

// cpuTime reports that the process's CPU time is not measured here: the
// benchmarks then report wall time only.
func cpuTime(*testing.B) (time.Duration, bool) { return 0, false }
