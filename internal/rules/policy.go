package rules

import (
	"time"

	"cloud.google.com/go/bigtable"
)

// GCAge returns the shortest age after which policy p lets GC delete a
// cell on its own, and false when no rule of p does: no GC, a version
// limit, an intersection (which needs all its rules; the emulator ignores
// it).
func GCAge(p bigtable.GCPolicy) (time.Duration, bool) {
	switch p := p.(type) {
	case bigtable.MaxAgeGCPolicy:
		return time.Duration(p), true
	case bigtable.UnionGCPolicy:
		var shortest time.Duration
		found := false
		for _, c := range p.Children {
			if a, ok := GCAge(c); ok && (!found || a < shortest) {
				shortest, found = a, true
			}
		}
		return shortest, found
	}
	return 0, false
}

// GCVersions returns the fewest versions of a column that policy p keeps,
// and false when no rule of p limits versions on its own.
func GCVersions(p bigtable.GCPolicy) (int, bool) {
	switch p := p.(type) {
	case bigtable.MaxVersionsGCPolicy:
		return int(p), true
	case bigtable.UnionGCPolicy:
		fewest, found := 0, false
		for _, c := range p.Children {
			if n, ok := GCVersions(c); ok && (!found || n < fewest) {
				fewest, found = n, true
			}
		}
		return fewest, found
	}
	return 0, false
}
