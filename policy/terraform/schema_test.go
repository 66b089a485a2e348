package terraform

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The test's reading of HCL and of the provider's schema: enough of HCL to
// read what GCPolicies writes, strictly (any other line fails), and the
// schema as terraform providers schema -json prints it, to check every
// resource against.

// An hclBlock is a block of HCL: a resource, or a nested block.
type hclBlock struct {
	typ    string
	labels []string
	attrs  map[string]hclValue
	order  []string
	blocks []*hclBlock
}

// An hclValue is an attribute's value: a string, a number, a bool, or a
// reference.
type hclValue struct {
	kind string // "string", "number", "bool", "reference"
	text string // the string unquoted, or the token
}

// parseHCL reads blocks and attributes, one a line, skipping blank lines
// and lines that start with "#".
func parseHCL(src string) ([]*hclBlock, error) {
	var top []*hclBlock
	var stack []*hclBlock
	for i, line := range strings.Split(src, "\n") {
		line = strings.TrimSpace(line)
		at := func(format string, args ...any) error {
			return fmt.Errorf("line %d %q: %s", i+1, line, fmt.Sprintf(format, args...))
		}
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
			continue
		case line == "}":
			if len(stack) == 0 {
				return nil, at("} without a block")
			}
			stack = stack[:len(stack)-1]
			continue
		case strings.HasSuffix(line, "{"):
			fields := strings.Fields(strings.TrimSuffix(line, "{"))
			if len(fields) == 0 || !isIdent(fields[0]) {
				return nil, at("not a block")
			}
			b := &hclBlock{typ: fields[0], attrs: map[string]hclValue{}}
			for _, l := range fields[1:] {
				s, err := strconv.Unquote(l)
				if err != nil {
					return nil, at("label %s is not a string", l)
				}
				b.labels = append(b.labels, s)
			}
			if len(stack) == 0 {
				top = append(top, b)
			} else {
				parent := stack[len(stack)-1]
				parent.blocks = append(parent.blocks, b)
			}
			stack = append(stack, b)
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || !isIdent(name) || len(stack) == 0 {
			return nil, at("not an attribute of a block")
		}
		b := stack[len(stack)-1]
		if _, dup := b.attrs[name]; dup {
			return nil, at("attribute %s set twice", name)
		}
		v, err := parseValue(value)
		if err != nil {
			return nil, at("%v", err)
		}
		b.attrs[name] = v
		b.order = append(b.order, name)
	}
	if len(stack) > 0 {
		return nil, fmt.Errorf("block %s not closed", stack[len(stack)-1].typ)
	}
	return top, nil
}

// parseValue reads one attribute's value.
func parseValue(v string) (hclValue, error) {
	switch {
	case strings.HasPrefix(v, `"`):
		s, err := strconv.Unquote(v)
		if err != nil {
			return hclValue{}, fmt.Errorf("bad string %s", v)
		}
		if strings.Contains(strings.ReplaceAll(s, "$${", ""), "${") {
			return hclValue{}, fmt.Errorf("string %s holds a template", v)
		}
		return hclValue{"string", strings.ReplaceAll(s, "$${", "${")}, nil
	case v == "true" || v == "false":
		return hclValue{"bool", v}, nil
	}
	if _, err := strconv.Atoi(v); err == nil {
		return hclValue{"number", v}, nil
	}
	for _, part := range strings.Split(v, ".") {
		if !isIdent(part) {
			return hclValue{}, fmt.Errorf("%s is not a string, a number, a bool or a reference", v)
		}
	}
	return hclValue{"reference", v}, nil
}

// isIdent reports an HCL identifier.
func isIdent(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' || s[0] == '-' {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// A schemaBlock is a block of a resource's schema, as terraform providers
// schema -json prints it.
type schemaBlock struct {
	Attributes map[string]schemaAttribute `json:"attributes"`
	BlockTypes map[string]schemaBlockType `json:"block_types"`
}

type schemaAttribute struct {
	Type       any  `json:"type"`
	Required   bool `json:"required"`
	Optional   bool `json:"optional"`
	Computed   bool `json:"computed"`
	Deprecated bool `json:"deprecated"`
}

type schemaBlockType struct {
	NestingMode string      `json:"nesting_mode"`
	Block       schemaBlock `json:"block"`
	MinItems    int         `json:"min_items"`
	MaxItems    int         `json:"max_items"`
}

// providerSchema reads the fixture: the schema of each resource, by type.
func providerSchema(t *testing.T) map[string]schemaBlock {
	t.Helper()
	raw, err := os.ReadFile("testdata/provider-schema.json")
	require.NoError(t, err)
	var doc struct {
		FormatVersion   string `json:"format_version"`
		ProviderSchemas map[string]struct {
			ResourceSchemas map[string]struct {
				Block schemaBlock `json:"block"`
			} `json:"resource_schemas"`
		} `json:"provider_schemas"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	require.Equal(t, "1.0", doc.FormatVersion)
	google, ok := doc.ProviderSchemas["registry.terraform.io/hashicorp/google"]
	require.True(t, ok)
	out := map[string]schemaBlock{}
	for typ, s := range google.ResourceSchemas {
		out[typ] = s.Block
	}
	require.Contains(t, out, gcPolicyType)
	require.Contains(t, out, tableType)
	return out
}

// schemaErrors lists where b breaks schema s: an argument the schema does
// not have, or cannot be set (computed only, deprecated), a value of the
// wrong type, a required argument missing, a block repeated more than the
// schema allows.
func schemaErrors(where string, b *hclBlock, s schemaBlock) []string {
	var errs []string
	for _, name := range b.order {
		v := b.attrs[name]
		a, ok := s.Attributes[name]
		switch {
		case !ok:
			errs = append(errs, fmt.Sprintf("%s: no argument %s", where, name))
		case !a.Required && !a.Optional:
			errs = append(errs, fmt.Sprintf("%s: %s cannot be set (computed only)", where, name))
		case a.Deprecated:
			errs = append(errs, fmt.Sprintf("%s: %s is deprecated", where, name))
		case v.kind != "reference" && a.Type != v.kind:
			errs = append(errs, fmt.Sprintf("%s: %s is a %s, the schema wants %v", where, name, v.kind, a.Type))
		}
	}
	for name, a := range s.Attributes {
		if _, set := b.attrs[name]; a.Required && !set {
			errs = append(errs, fmt.Sprintf("%s: required %s missing", where, name))
		}
	}
	count := map[string]int{}
	for _, nested := range b.blocks {
		count[nested.typ]++
		bt, ok := s.BlockTypes[nested.typ]
		if !ok {
			errs = append(errs, fmt.Sprintf("%s: no block %s", where, nested.typ))
			continue
		}
		if len(nested.labels) > 0 {
			errs = append(errs, fmt.Sprintf("%s: block %s takes no label", where, nested.typ))
		}
		errs = append(errs, schemaErrors(where+"."+nested.typ, nested, bt.Block)...)
	}
	for name, bt := range s.BlockTypes {
		n := count[name]
		if bt.MaxItems > 0 && n > bt.MaxItems || bt.NestingMode == "single" && n > 1 || n < bt.MinItems {
			errs = append(errs, fmt.Sprintf("%s: %d %s blocks, the schema allows %d to %d", where, n, name, bt.MinItems, bt.MaxItems))
		}
	}
	return errs
}

// providerErrors lists where a google_bigtable_gc_policy breaks the rules
// the provider checks beyond its schema: the documented values of
// deletion_policy and mode, durations time.ParseDuration reads (the
// provider's ValidateDuration), exactly one of max_age's days and duration,
// gc_rules alone, mode with both an age and a version limit.
func providerErrors(where string, b *hclBlock) []string {
	var errs []string
	if v, ok := b.attrs["deletion_policy"]; ok && v.text != "PREVENT" && v.text != "ABANDON" && v.text != "DELETE" {
		errs = append(errs, fmt.Sprintf("%s: deletion_policy %q is not PREVENT, ABANDON or DELETE", where, v.text))
	}
	if v, ok := b.attrs["mode"]; ok && v.text != "UNION" && v.text != "INTERSECTION" {
		errs = append(errs, fmt.Sprintf("%s: mode %q is not UNION or INTERSECTION", where, v.text))
	}
	has := map[string]bool{}
	for _, nested := range b.blocks {
		has[nested.typ] = true
		if nested.typ != "max_age" {
			continue
		}
		_, days := nested.attrs["days"]
		d, duration := nested.attrs["duration"]
		if days == duration {
			errs = append(errs, fmt.Sprintf("%s: max_age needs exactly one of days and duration", where))
		}
		if _, err := time.ParseDuration(d.text); duration && err != nil {
			errs = append(errs, fmt.Sprintf("%s: max_age.duration %q: %v", where, d.text, err))
		}
	}
	_, rules := b.attrs["gc_rules"]
	_, mode := b.attrs["mode"]
	if rules && (mode || has["max_age"] || has["max_version"]) {
		errs = append(errs, fmt.Sprintf("%s: gc_rules conflicts with mode, max_age and max_version", where))
	}
	if has["max_age"] && has["max_version"] && !mode {
		errs = append(errs, fmt.Sprintf("%s: max_age and max_version need a mode", where))
	}
	return errs
}

// values returns the block's values as a state holds them: nested blocks
// as lists of objects, numbers as json.Number.
func (b *hclBlock) values() map[string]any {
	out := map[string]any{}
	for name, v := range b.attrs {
		switch v.kind {
		case "number":
			out[name] = json.Number(v.text)
		case "bool":
			out[name] = v.text == "true"
		default:
			out[name] = v.text
		}
	}
	for _, nested := range b.blocks {
		l, _ := out[nested.typ].([]any)
		out[nested.typ] = append(l, nested.values())
	}
	return out
}

// TestParseHCL checks the test's HCL reader, which the schema tests rely
// on: what it reads, and what it refuses.
func TestParseHCL(t *testing.T) {
	blocks, err := parseHCL("# c\nresource \"a\" \"b\" {\n  x = \"s$${x}\"\n  n = 3\n  f = true\n  r = a.b.c\n\n  blk {\n    y = 1\n  }\n}\n")
	require.NoError(t, err)
	require.Len(t, blocks, 1)
	b := blocks[0]
	require.Equal(t, []string{"a", "b"}, b.labels)
	require.Equal(t, hclValue{"string", "s${x}"}, b.attrs["x"])
	require.Equal(t, hclValue{"number", "3"}, b.attrs["n"])
	require.Equal(t, hclValue{"bool", "true"}, b.attrs["f"])
	require.Equal(t, hclValue{"reference", "a.b.c"}, b.attrs["r"])
	require.Len(t, b.blocks, 1)
	require.Equal(t, map[string]any{"x": "s${x}", "n": json.Number("3"), "f": true, "r": "a.b.c",
		"blk": []any{map[string]any{"y": json.Number("1")}}}, b.values())
	for _, bad := range []string{"}", "x = 1", "resource \"a\" {\n x = \"${y}\"\n}", "resource \"a\" {\n x = 1\n x = 2\n}",
		"resource \"a\" {", "resource a {\n}", "resource \"a\" {\n x = f(1)\n}", "{\n}", "resource \"a\" {\n x = \"a\n}"} {
		_, err := parseHCL(bad)
		require.Error(t, err, bad)
	}
}
