package text

import (
	"encoding/json"
	"fmt"
	"time"
)

// A Duration is a time.Duration as every JSON the module writes spells
// one: a Go duration string ("1s", "1h30m0s", "0s"), which a person reads
// and time.ParseDuration parses, rather than the nanoseconds encoding/json
// would write ("keep":1000000000). Public types keep their fields
// time.Duration and convert in their MarshalJSON and UnmarshalJSON.
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

// OpenEnds returns a span's bounds as JSON writes them: a zero bound is
// an open end, nil, which a field tagged omitempty leaves out rather than
// writing the zero time.
func OpenEnds(from, until time.Time) (*time.Time, *time.Time) {
	var f, u *time.Time
	if !from.IsZero() {
		f = &from
	}
	if !until.IsZero() {
		u = &until
	}
	return f, u
}
