package ttl

import (
	"fmt"
	"strings"
	"time"

	"cloud.google.com/go/bigtable"
)

// GC policies as cbt spells them.

// describePolicy spells a GC policy as cbt setgcpolicy takes it:
// "maxage=2d", "maxversions=3", "maxage=1d or maxversions=2", "never";
// "missing" for a family that does not exist (nil).
func describePolicy(p bigtable.GCPolicy) string {
	return describeRule(p, true)
}

func describeRule(p bigtable.GCPolicy, top bool) string {
	join := func(children []bigtable.GCPolicy, op string) string {
		if len(children) == 0 {
			return "never"
		}
		parts := make([]string, len(children))
		for i, c := range children {
			parts[i] = describeRule(c, false)
		}
		if top || len(children) == 1 {
			return strings.Join(parts, op)
		}
		return "(" + strings.Join(parts, op) + ")"
	}
	switch p := p.(type) {
	case nil:
		return "missing"
	case bigtable.MaxAgeGCPolicy:
		return "maxage=" + formatAge(time.Duration(p))
	case bigtable.MaxVersionsGCPolicy:
		return fmt.Sprintf("maxversions=%d", int(p))
	case bigtable.UnionGCPolicy:
		return join(p.Children, " or ")
	case bigtable.IntersectionGCPolicy:
		return join(p.Children, " and ")
	}
	if p.String() == "" {
		return "never"
	}
	return p.String()
}

// formatAge spells a GC age in the largest whole unit, as cbt takes it:
// "2d" (for 48h), "36h", "90m", "1s", "1500ms".
func formatAge(d time.Duration) string {
	for _, u := range []struct {
		d      time.Duration
		suffix string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}, {time.Millisecond, "ms"}} {
		if d != 0 && d%u.d == 0 {
			return fmt.Sprintf("%d%s", d/u.d, u.suffix)
		}
	}
	return d.String()
}
