//go:build unix

package testkit

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime is CPUTime on Unix: getrusage's user and system time.
func cpuTime(tb testing.TB) (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
