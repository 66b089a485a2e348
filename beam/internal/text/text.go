// Package text spells counts, sizes, instants and durations in the Beam
// jobs' messages and JSON as the root module's tools spell them (its
// internal/text, which a module of its own may not import), so that a
// number reads the same in a Beam job's output as in cellttl's.
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

// Server says which Bigtable a job talks to and where that came from, for
// a message about a server that cannot be reached: the emulator at
// emulatorHost (the value of BIGTABLE_EMULATOR_HOST) when it is set,
// otherwise Cloud Bigtable by project and instance.
func Server(emulatorHost, project, instance string) string {
	if emulatorHost != "" {
		return "the emulator at BIGTABLE_EMULATOR_HOST=" + emulatorHost
	}
	return fmt.Sprintf("Cloud Bigtable, project %q instance %q (-project, -instance)", project, instance)
}
