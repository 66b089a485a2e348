// Package text spells counts, sizes, instants and durations in the Beam
// jobs' messages and JSON as the root module's tools spell them (its
// internal/text, which a module of its own may not import), so that a
// number reads the same in a Beam job's output as in cellttl's.
package text

import (
	"encoding/json"
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

// A Duration is a time.Duration as every JSON of the module spells one: a
// Go duration string ("1m0s"), not encoding/json's nanoseconds.
type Duration time.Duration

// MarshalJSON writes d as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads a Go duration string, or a number of nanoseconds,
// which is how the module wrote durations before it wrote strings.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var ns int64
		if json.Unmarshal(b, &ns) != nil {
			return fmt.Errorf("a duration must be a Go duration string such as \"1h30m0s\", or nanoseconds: %s", b)
		}
		*d = Duration(ns)
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("a duration must be a Go duration string such as \"1h30m0s\": %w", err)
	}
	*d = Duration(v)
	return nil
}
