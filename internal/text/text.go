// Package text spells counts, sizes and instants the way every message,
// report and command of this module spells them, so that a number reads
// the same in an error, a report and a command's output.
package text

import (
	"fmt"
	"time"
)

// Plural returns n and the singular or plural words that follow it:
// "1 row", "3 rows".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Time prints an instant in UTC to the millisecond, Bigtable's
// granularity: "2030-04-30T09:00:00.000Z".
func Time(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

// Metric prints a count with a metric suffix: 950, 12.3k, 4.5M, 1.2G.
func Metric(n int64) string {
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

// Bytes prints a size in binary units: 512 B, 1.5 KiB, 3.2 MiB, 4.0 GiB.
func Bytes(n int64) string {
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
