//go:build unix

package testkit

import (
	"syscall"
	"testing"
	"time"
)

// CPUTime returns the user and system CPU time of the process, and true.
func CPUTime(b testing.TB) (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
