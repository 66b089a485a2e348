package ttl

import (
	"fmt"
	"time"
)

// How the family tools' messages and plans print counts and instants.

// plural returns n and the singular or plural words that follow it.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// formatTime prints an instant in UTC to the millisecond, Bigtable's
// granularity.
func formatTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }
