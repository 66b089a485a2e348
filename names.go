package ttl

import (
	"fmt"
	"reflect"
)

// Family names, as callers give them and as Bigtable spells columns.
//
// A bad family name is refused wherever it appears, by one check, with the
// sentinel of the argument that holds it: ErrInvalidStrategy in the
// families given to NewTable, CheckFamilies and EnsureFamilies (the
// table's configuration), ErrInvalidOption in OtherFamilies, and
// ErrUnknownFamily in a Mutation or ReadModifyWrite (the data). The
// message always names the family. The three sentinels predate this rule
// and callers test for them, so they are kept rather than merged.

// checkFamilies validates a map of managed families as NewTable,
// CheckFamilies and EnsureFamilies take it: at least one family, each with
// a name Bigtable accepts and a valid strategy. It returns a copy, so that
// the caller may change its map afterwards.
func checkFamilies(families map[string]Strategy) (map[string]Strategy, error) {
	if len(families) == 0 {
		return nil, fmt.Errorf("%w: no family has a strategy", ErrInvalidStrategy)
	}
	managed := make(map[string]Strategy, len(families))
	for name, s := range families {
		if err := checkFamilyName(name); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidStrategy, err)
		}
		if s == nil {
			return nil, fmt.Errorf("%w: family %q has a nil strategy; use OneSecond, DefaultExpiration or SequenceNumbers",
				ErrInvalidStrategy, name)
		}
		if err := s.valid(); err != nil {
			return nil, fmt.Errorf("%w (family %q)", err, name)
		}
		managed[name] = s
	}
	return managed, nil
}

// checkFamilyName reports a family name Bigtable would refuse:
// [_a-zA-Z0-9][-_.a-zA-Z0-9]*.
func checkFamilyName(name string) error {
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

// isNilPointer reports whether v holds a nil pointer, which would satisfy
// an interface and then panic when used.
func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// splitColumn splits a ReadItem's "family:qualifier".
func splitColumn(column string) (family, qualifier string) {
	for i := 0; i < len(column); i++ {
		if column[i] == ':' {
			return column[:i], column[i+1:]
		}
	}
	return column, ""
}
