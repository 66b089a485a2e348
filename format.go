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

// metric prints a count with a metric suffix: 950, 12.3k, 4.5M, 1.2G.
func metric(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 1e6:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	case n < 1e9:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	}
	return fmt.Sprintf("%.1fG", float64(n)/1e9)
}

// byteSize prints a size in binary units: 512 B, 1.5 KiB, 3.2 MiB, 4.0 GiB.
func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}
