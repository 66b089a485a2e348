package terraform

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/policy"
)

// How the provider turns a google_bigtable_gc_policy's values into a GC
// policy, and a column_family's type into a value type: the rules of its
// generateBigtableGCPolicy, getGCPolicyFromJSON and getType, so that a
// plan or a state is read as Terraform would apply it.

// errUnknown reports a policy that the plan knows only after apply.
var errUnknown = errors.New("known only after apply")

// gcPolicyOf returns the GC policy the provider sets from a resource's
// values (unknown: the plan's after_unknown): gc_rules when set; otherwise
// max_age (duration, or days) and max_version (its first number), joined
// by mode; no GC when none is set. An error says why the provider would
// refuse the values, or wraps errUnknown.
func gcPolicyOf(values map[string]any, unknown any) (bigtable.GCPolicy, error) {
	for _, key := range []string{"gc_rules", "mode"} {
		if unknownAt(unknown, key) {
			return nil, fmt.Errorf("%s is %w", key, errUnknown)
		}
	}
	if rules := str(values, "gc_rules"); rules != "" {
		dec := json.NewDecoder(strings.NewReader(rules))
		dec.UseNumber()
		var top map[string]any
		if err := dec.Decode(&top); err != nil {
			return nil, fmt.Errorf("gc_rules is not a JSON object: %v", err)
		}
		return parseGCRules(top, true)
	}
	var rules []bigtable.GCPolicy
	if ages := list(values, "max_age"); len(ages) > 0 || unknownAt(unknown, "max_age") {
		age, err := maxAge(ages, unknown)
		if err != nil {
			return nil, err
		}
		rules = append(rules, bigtable.MaxAgePolicy(age))
	}
	if versions := list(values, "max_version"); len(versions) > 0 || unknownAt(unknown, "max_version") {
		if unknownAt(unknown, "max_version") || unknownAt(unknown, "max_version", 0, "number") {
			return nil, fmt.Errorf("max_version is %w", errUnknown)
		}
		first, _ := versions[0].(map[string]any)
		n, err := number(first["number"])
		if err != nil {
			return nil, fmt.Errorf("max_version.number: %v", err)
		}
		rules = append(rules, bigtable.MaxVersionsPolicy(n))
	}
	mode := str(values, "mode")
	switch {
	case len(rules) == 0:
		return bigtable.NoGcPolicy(), nil
	case mode == "UNION":
		return bigtable.UnionPolicy(rules...), nil
	case mode == "INTERSECTION":
		return bigtable.IntersectionPolicy(rules...), nil
	case mode != "":
		return nil, fmt.Errorf("mode %q is not UNION or INTERSECTION", mode)
	case len(rules) > 1:
		return nil, errors.New("max_age and max_version without mode: the provider refuses them")
	}
	return rules[0], nil
}

// maxAge returns the age of a max_age block: its duration, or its days
// when the duration is empty.
func maxAge(ages []any, unknown any) (time.Duration, error) {
	if unknownAt(unknown, "max_age") || unknownAt(unknown, "max_age", 0, "duration") {
		return 0, fmt.Errorf("max_age is %w", errUnknown)
	}
	first, _ := ages[0].(map[string]any)
	if d := str(first, "duration"); d != "" {
		age, err := parseDuration(d)
		if err != nil {
			return 0, fmt.Errorf("max_age.duration: %v", err)
		}
		return age, nil
	}
	if unknownAt(unknown, "max_age", 0, "days") {
		return 0, fmt.Errorf("max_age is %w", errUnknown)
	}
	days, err := number(first["days"])
	if err != nil {
		return 0, fmt.Errorf("max_age.days: %v", err)
	}
	return time.Duration(days) * 24 * time.Hour, nil
}

// number reads a whole number from a JSON value.
func number(v any) (int, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("%v is not a number", v)
	}
	i, err := strconv.Atoi(n.String())
	if err != nil {
		return 0, fmt.Errorf("%v is not a whole number", n)
	}
	return i, nil
}

// parseGCRules reads gc_rules as the provider does (validateNestedPolicy,
// getGCPolicyFromJSON): at the top an object with "rules", one rule
// without "mode" or at least two with it; below, {"max_age": "1h"},
// {"max_version": 2} or a nested {"mode", "rules"}. A mode other than
// "union" or "intersection" takes the first rule alone, as the provider
// does.
func parseGCRules(p map[string]any, top bool) (bigtable.GCPolicy, error) {
	if err := validateRule(p, top); err != nil {
		return nil, err
	}
	rules, _ := p["rules"].([]any)
	var children []bigtable.GCPolicy
	for _, r := range rules {
		child, ok := r.(map[string]any)
		if !ok {
			return nil, errors.New("gc_rules: a rule is not an object")
		}
		if err := validateRule(child, false); err != nil {
			return nil, err
		}
		if v, ok := child["max_age"]; ok {
			d, err := parseDuration(v.(string))
			if err != nil {
				return nil, fmt.Errorf("gc_rules: max_age: %v", err)
			}
			children = append(children, bigtable.MaxAgePolicy(d))
		}
		if v, ok := child["max_version"]; ok {
			n, err := number(v)
			if err != nil {
				return nil, fmt.Errorf("gc_rules: max_version: %v", err)
			}
			children = append(children, bigtable.MaxVersionsPolicy(n))
		}
		if _, ok := child["mode"]; ok {
			n, err := parseGCRules(child, false)
			if err != nil {
				return nil, err
			}
			children = append(children, n)
		}
	}
	if len(children) == 0 {
		return nil, errors.New("gc_rules: no rule")
	}
	switch p["mode"] {
	case "union":
		return bigtable.UnionPolicy(children...), nil
	case "intersection":
		return bigtable.IntersectionPolicy(children...), nil
	}
	return children[0], nil
}

// validateRule checks one object of gc_rules as the provider's
// validateNestedPolicy does.
func validateRule(p map[string]any, top bool) error {
	rulesV, hasRules := p["rules"]
	rules, isList := rulesV.([]any)
	_, hasMode := p["mode"]
	age, hasAge := p["max_age"]
	versions, hasVersions := p["max_version"]
	_, ageString := age.(string)
	_, versionsNumber := versions.(json.Number)
	switch {
	case len(p) > 2:
		return errors.New("gc_rules: a rule has more than 2 fields")
	case hasRules && !isList:
		return errors.New("gc_rules: rules must be an array")
	case hasMode && len(rules) < 2:
		return errors.New("gc_rules: a mode needs at least 2 rules")
	case top && !hasRules:
		return errors.New("gc_rules: no rules")
	case top && !hasMode && len(rules) != 1:
		return errors.New("gc_rules: without a mode, rules holds 1 rule")
	case !top && len(p) == 2 && (!hasMode || !hasRules):
		return errors.New("gc_rules: a nested rule needs mode and rules")
	case !top && len(p) == 1 && !hasAge && !hasVersions:
		return errors.New("gc_rules: a rule needs max_age or max_version")
	case hasVersions && !versionsNumber:
		return errors.New("gc_rules: max_version must be a number")
	case hasAge && !ageString:
		return errors.New("gc_rules: max_age must be a string")
	}
	return nil
}

// durationUnits are the units of the provider's ParseDuration: Go's, and
// "d" and "w".
var durationUnits = map[string]float64{
	"ns": 1, "us": 1e3, "µs": 1e3, "μs": 1e3, "ms": 1e6, "s": 1e9, "m": 60e9, "h": 3600e9,
	"d": 24 * 3600e9, "w": 7 * 24 * 3600e9,
}

// parseDuration reads an age as the provider's ParseDuration does ("168h",
// "7d", "1.5h", "2h45m"), and a bare whole number as microseconds, the
// form in which the provider writes ages of less than a minute back into
// gc_rules (bigtable's MaxAgeGCPolicy.GetDurationString). An age below
// zero is refused.
func parseDuration(s string) (time.Duration, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 && n <= int64(1<<63-1)/int64(time.Microsecond) {
		return time.Duration(n) * time.Microsecond, nil
	}
	bad := fmt.Errorf("%q is not a duration such as 168h, 7d or 90s", s)
	rest, total := s, 0.0
	if rest == "" {
		return 0, bad
	}
	for rest != "" {
		i := strings.IndexFunc(rest, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
		if i <= 0 {
			return 0, bad
		}
		v, err := strconv.ParseFloat(rest[:i], 64)
		if err != nil {
			return 0, bad
		}
		rest = rest[i:]
		j := strings.IndexAny(rest, "0123456789.")
		if j < 0 {
			j = len(rest)
		}
		unit, ok := durationUnits[rest[:j]]
		if !ok {
			return 0, bad
		}
		total += v * unit
		rest = rest[j:]
	}
	if total >= 1<<63 {
		return 0, bad
	}
	return time.Duration(total), nil
}

// typeOf returns the kind of cell a column_family's type holds, as
// policy.DescribeType spells it: "intsum" is a counter, "intmin",
// "intmax", "inthll" and other aggregates given as JSON are aggregates,
// "" is plain.
func typeOf(t string) (string, error) {
	t = strings.TrimSuffix(t, "\n")
	switch t {
	case "":
		return policy.DescribeType(nil), nil
	case counterType:
		return policy.DescribeType(bigtable.AggregateType{Input: bigtable.Int64Type{}, Aggregator: bigtable.SumAggregator{}}), nil
	case "intmin", "intmax", "inthll":
		return policy.DescribeType(bigtable.AggregateType{Input: bigtable.Int64Type{}, Aggregator: bigtable.MinAggregator{}}), nil
	}
	vt, err := bigtable.UnmarshalJSON([]byte(t))
	if err != nil {
		return "", fmt.Errorf("type %q is not one the provider reads: %v", t, err)
	}
	return policy.DescribeType(vt), nil
}
