package policy

import (
	"errors"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
)

// TestDescribe checks the cbt spelling of policies, intersections
// included: the emulator stores and reports them, though its GC ignores
// them.
func TestDescribe(t *testing.T) {
	for _, tt := range []struct {
		p    bigtable.GCPolicy
		want string
	}{
		{nil, "missing"},
		{bigtable.NoGcPolicy(), "never"},
		{bigtable.MaxAgePolicy(48 * time.Hour), "maxage=2d"},
		{bigtable.MaxAgePolicy(36 * time.Hour), "maxage=36h"},
		{bigtable.MaxAgePolicy(90 * time.Minute), "maxage=90m"},
		{bigtable.MaxAgePolicy(time.Second), "maxage=1s"},
		{bigtable.MaxAgePolicy(1500 * time.Millisecond), "maxage=1500ms"},
		{bigtable.MaxVersionsPolicy(3), "maxversions=3"},
		{bigtable.UnionPolicy(bigtable.MaxAgePolicy(24*time.Hour), bigtable.MaxVersionsPolicy(2)), "maxage=1d or maxversions=2"},
		{bigtable.IntersectionPolicy(bigtable.MaxAgePolicy(24*time.Hour), bigtable.MaxVersionsPolicy(2)), "maxage=1d and maxversions=2"},
		{bigtable.UnionPolicy(bigtable.MaxVersionsPolicy(1),
			bigtable.IntersectionPolicy(bigtable.MaxAgePolicy(24*time.Hour), bigtable.MaxVersionsPolicy(2))),
			"maxversions=1 or (maxage=1d and maxversions=2)"},
		{bigtable.UnionPolicy(), "never"},
	} {
		if got := Describe(tt.p); got != tt.want {
			t.Errorf("Describe(%v) = %q want %q", tt.p, got, tt.want)
		}
	}
}

// TestParse checks that every spelling Describe makes reads back as the
// same policy, and that spellings Describe never makes are refused.
func TestParse(t *testing.T) {
	for _, p := range []bigtable.GCPolicy{
		nil,
		bigtable.NoGcPolicy(),
		bigtable.MaxAgePolicy(48 * time.Hour),
		bigtable.MaxAgePolicy(1500 * time.Millisecond),
		bigtable.MaxAgePolicy(1500 * time.Microsecond),
		bigtable.MaxVersionsPolicy(3),
		bigtable.UnionPolicy(bigtable.MaxAgePolicy(24*time.Hour), bigtable.MaxVersionsPolicy(2), bigtable.MaxAgePolicy(time.Second)),
		bigtable.IntersectionPolicy(bigtable.MaxAgePolicy(24*time.Hour), bigtable.MaxVersionsPolicy(2)),
		bigtable.UnionPolicy(bigtable.MaxVersionsPolicy(1),
			bigtable.IntersectionPolicy(bigtable.MaxAgePolicy(24*time.Hour), bigtable.UnionPolicy(bigtable.MaxVersionsPolicy(2), bigtable.MaxAgePolicy(time.Hour)))),
		bigtable.UnionPolicy(bigtable.MaxAgePolicy(time.Hour), bigtable.NoGcPolicy()),
	} {
		text := Describe(p)
		got, err := Parse(text)
		if err != nil {
			t.Errorf("Parse(%q): %v", text, err)
			continue
		}
		if Describe(got) != text || (p == nil) != (got == nil) {
			t.Errorf("Parse(%q) = %v, described %q", text, got, Describe(got))
		}
		if p != nil && got.String() != p.String() {
			t.Errorf("Parse(%q) = %v, want %v", text, got, p)
		}
	}
	for _, bad := range []string{"", "maxage", "maxage=", "maxage=0s", "maxage=-1h", "maxage=xd", "maxversions=0",
		"maxversions=x", "maxage=1d or", "maxage=1d or maxversions=2 and maxage=1h", "(maxage=1d", "maxage=1d)",
		"age() > 2d", "maxage=1d xor maxversions=2", "(", "missing or never"} {
		if p, err := Parse(bad); !errors.Is(err, ttl.ErrInvalidOption) {
			t.Errorf("Parse(%q) = %v, %v; want ErrInvalidOption", bad, p, err)
		}
	}
}
