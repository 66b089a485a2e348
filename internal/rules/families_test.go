package rules

import (
	"testing"
)

// TestCheckFamilyName checks the names Bigtable accepts:
// [_a-zA-Z0-9][-_.a-zA-Z0-9]*.
func TestCheckFamilyName(t *testing.T) {
	for _, name := range []string{"f", "F", "9", "_", "_f", "cf1", "a-b", "a.b", "a_b", "A-b.c_9", "a--", "x."} {
		if err := CheckFamilyName(name); err != nil {
			t.Errorf("CheckFamilyName(%q) = %v", name, err)
		}
	}
	for _, name := range []string{"", "-a", ".a", "a b", "a:b", "a/b", "é", "f\x00", "a*", " f"} {
		if err := CheckFamilyName(name); err == nil {
			t.Errorf("CheckFamilyName(%q) accepted", name)
		}
	}
}

// TestSplitColumn checks the split of "family:qualifier" at its first
// colon: a qualifier may hold colons, a family never does.
func TestSplitColumn(t *testing.T) {
	for _, tt := range []struct{ column, family, qualifier string }{
		{"f:q", "f", "q"},
		{"f:a:b", "f", "a:b"},
		{"f:", "f", ""},
		{":q", "", "q"},
		{"f", "f", ""},
		{"", "", ""},
	} {
		family, qualifier := SplitColumn(tt.column)
		if family != tt.family || qualifier != tt.qualifier {
			t.Errorf("SplitColumn(%q) = %q, %q; want %q, %q", tt.column, family, qualifier, tt.family, tt.qualifier)
		}
	}
}

// TestIsNilPointer checks that only a nil pointer in an interface is one.
func TestIsNilPointer(t *testing.T) {
	type table struct{}
	var nilTable *table
	var nilMap map[string]int
	var nilFunc func()
	for _, tt := range []struct {
		name string
		v    any
		want bool
	}{
		{"nil pointer", nilTable, true},
		{"pointer", &table{}, false},
		{"nil interface", nil, false},
		{"struct", table{}, false},
		{"nil map", nilMap, false},
		{"nil func", nilFunc, false},
		{"int", 0, false},
	} {
		if got := IsNilPointer(tt.v); got != tt.want {
			t.Errorf("%s: IsNilPointer = %v, want %v", tt.name, got, tt.want)
		}
	}
}
