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

// A Ruler is a strategy that knows its rule: each of package ttl's
// strategies. The method is exported so that this package, which imports
// nothing of ttl, can ask for it; ttl declares it on its unexported
// strategy types and on Move, whose rule is Kind Moving.
type Ruler interface {
	// Rule returns the rule behind the strategy's timestamps, or the
	// error, wrapping ErrInvalidStrategy, that makes the strategy invalid.
	Rule() (Strategy, error)
}

// Of returns the rule of s, a ttl.Strategy, or the error, wrapping
// ErrInvalidStrategy, that makes s invalid. A nil s is a family without a
// strategy (Kind None); anything but a Ruler is no strategy of ttl's.
func Of(s any) (Strategy, error) {
	if s == nil {
		return Strategy{Kind: None}, nil
	}
	r, ok := s.(Ruler)
	if !ok || IsNilPointer(s) {
		return Strategy{}, fmt.Errorf("%w: %T is not a ttl.Strategy", ErrInvalidStrategy, s)
	}
	return r.Rule()
}

// CheckFamilies validates a map of managed families as NewTable, the
// family tools and the audit take it: at least one family, each with a
// name Bigtable accepts and a valid strategy. Its errors wrap
// ErrInvalidStrategy. It returns a copy, so that the caller may change its
// map afterwards.
func CheckFamilies[S comparable](families map[string]S) (map[string]S, error) {
	if len(families) == 0 {
		return nil, fmt.Errorf("%w: no family has a strategy", ErrInvalidStrategy)
	}
	managed := make(map[string]S, len(families))
	var none S
	for name, s := range families {
		if err := CheckFamilyName(name); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidStrategy, err)
		}
		if s == none {
			return nil, fmt.Errorf("%w: family %q has a nil strategy; use OneSecond, DefaultExpiration or SequenceNumbers",
				ErrInvalidStrategy, name)
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
