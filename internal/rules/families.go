package rules

import (
	"fmt"
	"reflect"
)

// Family names, as callers give them and as Bigtable spells columns.
//
// A bad family name is refused wherever it appears, by one check, with the
// sentinel of the argument that holds it: ErrInvalidStrategy in a map of
// managed families (a table's configuration), ErrInvalidOption in
// OtherFamilies, ErrUnknownFamily in a Mutation or ReadModifyWrite (the
// data). The message always names the family.

// Of returns the rule of s, a ttl.Strategy, or the error, wrapping
// ttl.ErrInvalidStrategy, that makes s invalid. A nil s is a family
// without a strategy (Kind None). Package ttl sets Of when it is
// initialised; nothing else may.
var Of func(s any) (Strategy, error)

// CheckFamilies validates a map of managed families as NewTable, the
// family tools and the audit take it: at least one family, each with a
// name Bigtable accepts and a valid strategy. Its errors wrap invalid
// (ttl.ErrInvalidStrategy, which this package cannot name). It returns a
// copy, so that the caller may change its map afterwards.
func CheckFamilies[S comparable](families map[string]S, invalid error) (map[string]S, error) {
	if len(families) == 0 {
		return nil, fmt.Errorf("%w: no family has a strategy", invalid)
	}
	managed := make(map[string]S, len(families))
	var none S
	for name, s := range families {
		if err := CheckFamilyName(name); err != nil {
			return nil, fmt.Errorf("%w: %v", invalid, err)
		}
		if s == none {
			return nil, fmt.Errorf("%w: family %q has a nil strategy; use OneSecond, DefaultExpiration or SequenceNumbers",
				invalid, name)
		}
		if _, err := Of(s); err != nil {
			return nil, fmt.Errorf("%w (family %q)", err, name)
		}
		managed[name] = s
	}
	return managed, nil
}

// CheckFamilyName reports a family name Bigtable would refuse:
// [_a-zA-Z0-9][-_.a-zA-Z0-9]*.
func CheckFamilyName(name string) error {
	if name == "" {
		return fmt.Errorf("empty family name")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' ||
			i > 0 && (c == '-' || c == '.')
		if !ok {
			return fmt.Errorf("family name %q is not [_a-zA-Z0-9][-_.a-zA-Z0-9]*", name)
		}
	}
	return nil
}

// SplitColumn splits a ReadItem's "family:qualifier".
func SplitColumn(column string) (family, qualifier string) {
	for i := 0; i < len(column); i++ {
		if column[i] == ':' {
			return column[:i], column[i+1:]
		}
	}
	return column, ""
}

// IsNilPointer reports whether v holds a nil pointer, which would satisfy
// an interface and then panic when used.
func IsNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}
