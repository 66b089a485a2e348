//go:build unix

package ttl_test

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime returns the user and system CPU time of the process.
func cpuTime(b *testing.B) (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
