package terraform

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl/policy"
)

// values reads a resource's values as the JSON of a state holds them.
func values(t *testing.T, s string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v map[string]any
	require.NoError(t, dec.Decode(&v))
	return v
}

// TestGCPolicyOf checks the policy the provider sets from each form of a
// resource's values, and the values it refuses, as its
// generateBigtableGCPolicy and getGCPolicyFromJSON do.
func TestGCPolicyOf(t *testing.T) {
	for in, want := range map[string]string{
		`{}`:                                 "never",
		`{"max_age": [], "max_version": []}`: "never",
		`{"max_age": [{"days": 3}]}`:         "maxage=3d",
		`{"max_age": [{"days": 3, "duration": ""}]}`:                                                "maxage=3d",
		`{"max_age": [{"days": 0, "duration": "1.5h"}]}`:                                            "maxage=90m",
		`{"max_age": [{"duration": "2h45m"}]}`:                                                      "maxage=165m",
		`{"max_age": [{"duration": "1w"}]}`:                                                         "maxage=7d",
		`{"max_age": [{"duration": "500us"}]}`:                                                      "maxage=500µs",
		`{"max_version": [{"number": 2}, {"number": 9}]}`:                                           "maxversions=2",
		`{"max_age": [{"duration": "1h"}], "max_version": [{"number": 2}], "mode": "UNION"}`:        "maxage=1h or maxversions=2",
		`{"max_age": [{"duration": "1h"}], "max_version": [{"number": 2}], "mode": "INTERSECTION"}`: "maxage=1h and maxversions=2",
		`{"max_age": [{"duration": "1h"}], "mode": "UNION"}`:                                        "maxage=1h",
		`{"gc_rules": "{\"rules\":[{\"max_age\":\"7d\"}]}"}`:                                        "maxage=7d",
		`{"gc_rules": "{\"rules\":[{\"max_age\":\"90000000\"}]}"}`:                                  "maxage=90s",
		`{"gc_rules": "{\"rules\":[{\"max_version\":3}]}", "max_age": [{"days": 1}]}`:               "maxversions=3",
		`{"gc_rules": "{\"mode\":\"union\",\"rules\":[{\"max_age\":\"1d\"},{\"mode\":\"intersection\",\"rules\":[{\"max_age\":\"2h\"},{\"max_version\":2}]}]}"}`: "maxage=1d or (maxage=2h and maxversions=2)",
		`{"gc_rules": "{\"mode\":\"UNION\",\"rules\":[{\"max_age\":\"1d\"},{\"max_version\":2}]}"}`:                                                              "maxage=1d",
	} {
		p, err := gcPolicyOf(values(t, in), nil)
		require.NoError(t, err, in)
		assert.Equal(t, want, policy.Describe(p), in)
	}
	for in, msg := range map[string]string{
		`{"max_age": [{"duration": "1h"}], "max_version": [{"number": 2}]}`:     "max_age and max_version without mode",
		`{"max_age": [{"duration": "1h"}], "mode": "union"}`:                    `mode "union" is not UNION or INTERSECTION`,
		`{"max_age": [{"duration": "soon"}]}`:                                   `max_age.duration: "soon" is not a duration`,
		`{"max_age": [{"days": "3"}]}`:                                          "max_age.days: 3 is not a number",
		`{"max_age": [{"days": 1.5}]}`:                                          "max_age.days: 1.5 is not a whole number",
		`{"max_version": [{"number": null}]}`:                                   "max_version.number: <nil> is not a number",
		`{"gc_rules": "[1]"}`:                                                   "gc_rules is not a JSON object",
		`{"gc_rules": "{}"}`:                                                    "gc_rules: no rules",
		`{"gc_rules": "{\"rules\":[]}"}`:                                        "gc_rules: without a mode, rules holds 1 rule",
		`{"gc_rules": "{\"rules\":{}}"}`:                                        "gc_rules: rules must be an array",
		`{"gc_rules": "{\"rules\":[1]}"}`:                                       "gc_rules: a rule is not an object",
		`{"gc_rules": "{\"rules\":[{}]}"}`:                                      "gc_rules: no rule",
		`{"gc_rules": "{\"a\":1,\"b\":2,\"rules\":[]}"}`:                        "gc_rules: a rule has more than 2 fields",
		`{"gc_rules": "{\"mode\":\"union\",\"rules\":[{\"max_age\":\"1h\"}]}"}`: "gc_rules: a mode needs at least 2 rules",
		`{"gc_rules": "{\"rules\":[{\"max_age\":\"1h\",\"max_version\":2}]}"}`:  "gc_rules: a nested rule needs mode and rules",
		`{"gc_rules": "{\"rules\":[{\"colour\":\"red\"}]}"}`:                    "gc_rules: a rule needs max_age or max_version",
		`{"gc_rules": "{\"rules\":[{\"max_age\":7}]}"}`:                         "gc_rules: max_age must be a string",
		`{"gc_rules": "{\"rules\":[{\"max_version\":\"7\"}]}"}`:                 "gc_rules: max_version must be a number",
		`{"gc_rules": "{\"rules\":[{\"max_age\":\"-1h\"}]}"}`:                   `gc_rules: max_age: "-1h" is not a duration`,
		`{"gc_rules": "{\"rules\":[{\"max_version\":2.5}]}"}`:                   "gc_rules: max_version: 2.5 is not a whole number",
		`{"gc_rules": "{\"mode\":\"union\",\"rules\":[{\"max_age\":\"1h\"},{\"mode\":\"union\",\"rules\":[]}]}"}`: "gc_rules: a mode needs at least 2 rules",
	} {
		_, err := gcPolicyOf(values(t, in), nil)
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), msg, in)
		assert.False(t, errors.Is(err, errUnknown), in)
	}
}

// TestGCPolicyOfUnknown checks values a plan knows only after apply:
// reported as such, unless the provider would not use them (days, when a
// duration is set).
func TestGCPolicyOfUnknown(t *testing.T) {
	for _, tt := range []struct{ values, unknown string }{
		{`{}`, `{"gc_rules": true}`},
		{`{}`, `{"mode": true}`},
		{`{}`, `{"max_age": true}`},
		{`{"max_age": [{}]}`, `{"max_age": [{"duration": true}]}`},
		{`{"max_age": [{"duration": ""}]}`, `{"max_age": [{"days": true}]}`},
		{`{"max_version": [{}]}`, `{"max_version": [{"number": true}]}`},
		{`{}`, `{"max_version": true}`},
	} {
		_, err := gcPolicyOf(values(t, tt.values), values(t, tt.unknown))
		assert.True(t, errors.Is(err, errUnknown), "%s %s: %v", tt.values, tt.unknown, err)
	}
	p, err := gcPolicyOf(values(t, `{"max_age": [{"duration": "1h"}]}`), values(t, `{"max_age": [{"days": true}], "id": true}`))
	require.NoError(t, err)
	assert.Equal(t, "maxage=1h", policy.Describe(p))
	assert.False(t, unknownAt(values(t, `{"l": [true]}`), "l", 3))
}

// TestParseDuration checks the provider's durations, and the bare
// microseconds it writes back into gc_rules.
func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"1s": time.Second, "1000000": time.Second, "0": 0, "7d": 7 * 24 * time.Hour, "2w": 14 * 24 * time.Hour,
		"1.5h": 90 * time.Minute, "2h45m": 165 * time.Minute, "1500ms": 1500 * time.Millisecond, "3µs": 3 * time.Microsecond,
		"3μs": 3 * time.Microsecond, "10ns": 10, ".5s": 500 * time.Millisecond,
	} {
		got, err := parseDuration(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "h", "1x", "-1h", "1..5h", "99999999999999999999h", "1h-"} {
		_, err := parseDuration(in)
		assert.Error(t, err, in)
	}
	_, err := parseDuration("9223372036854775807")
	assert.Error(t, err, "microseconds beyond a Duration")
}

// TestTypeOf checks the kinds of cell of the provider's column family
// types.
func TestTypeOf(t *testing.T) {
	for in, want := range map[string]string{
		"": "plain", "intsum": "counter", "intsum\n": "counter", "intmax": "aggregate", "intmin": "aggregate", "inthll": "aggregate",
		`{"aggregateType": {"inputType": {"int64Type": {"encoding": {"bigEndianBytes": {}}}}, "sum": {}}}`: "counter",
		`{"aggregateType": {"inputType": {"int64Type": {"encoding": {"bigEndianBytes": {}}}}, "max": {}}}`: "aggregate",
	} {
		got, err := typeOf(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	_, err := typeOf("{bad")
	assert.ErrorContains(t, err, `type "{bad" is not one the provider reads`)
}
