package terraform

import (
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/policy"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// five are families of the three strategies, a grace and a counter.
func five() map[string]ttl.Strategy {
	return map[string]ttl.Strategy{
		"sess":   ttl.OneSecond(),
		"clicks": ttl.DefaultExpiration(7 * 24 * time.Hour),
		"seq":    ttl.SequenceNumbers(3),
		"swept":  ttl.Grace(ttl.DefaultExpiration(36*time.Hour), 90*time.Second),
		"hits":   ttl.Counter(ttl.DefaultExpiration(time.Hour)),
	}
}

// golden compares got with the golden file, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(want), got, "%s differs; go test ./policy/terraform -run %s -update rewrites it", path, t.Name())
}

// TestGCPolicies checks the resources of the three strategies, a grace
// and a counter, with names and with references to the table's resource,
// against golden files and against the provider's schema: every argument
// exists, can be set and has its type, the required ones are set, the
// values are ones the provider takes, and each resource, read back as the
// provider reads it, sets exactly the policy its strategy needs.
func TestGCPolicies(t *testing.T) {
	schema := providerSchema(t)
	for _, tt := range []struct {
		golden string
		opts   Options
	}{
		{"names.tf", Options{Instance: "my-instance", Table: "events", Project: "my-project"}},
		{"references.tf", Options{Instance: "my-instance", Table: "events", Project: "my-project",
			TableResource: "google_bigtable_table.events", IgnoreWarnings: true}},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			families := five()
			got, err := GCPolicies(families, tt.opts)
			require.NoError(t, err)
			golden(t, tt.golden, got)

			blocks, err := parseHCL(got)
			require.NoError(t, err)
			require.Len(t, blocks, len(families))
			seen := map[string]bool{}
			for _, b := range blocks {
				require.Equal(t, "resource", b.typ)
				require.Len(t, b.labels, 2)
				require.Equal(t, gcPolicyType, b.labels[0])
				where := b.labels[0] + "." + b.labels[1]
				assert.Empty(t, schemaErrors(where, b, schema[gcPolicyType]))
				assert.Empty(t, providerErrors(where, b))

				family := b.attrs["column_family"].text
				s, ok := families[family]
				require.True(t, ok, where)
				seen[family] = true
				assert.Equal(t, "events_"+family, b.labels[1])
				assert.Equal(t, hclValue{"string", "ABANDON"}, b.attrs["deletion_policy"], where)
				if tt.opts.TableResource != "" {
					assert.Equal(t, hclValue{"reference", "google_bigtable_table.events.name"}, b.attrs["table"])
					assert.Equal(t, hclValue{"reference", "google_bigtable_table.events.instance_name"}, b.attrs["instance_name"])
					assert.Equal(t, hclValue{"reference", "google_bigtable_table.events.project"}, b.attrs["project"])
					assert.Equal(t, hclValue{"bool", "true"}, b.attrs["ignore_warnings"])
				} else {
					assert.Equal(t, hclValue{"string", "events"}, b.attrs["table"])
					assert.Equal(t, hclValue{"string", "my-instance"}, b.attrs["instance_name"])
					assert.Equal(t, hclValue{"string", "my-project"}, b.attrs["project"])
				}
				p, err := gcPolicyOf(b.values(), nil)
				require.NoError(t, err, where)
				assert.Equal(t, policy.Describe(s.GCPolicy()), policy.Describe(p), where)
			}
			assert.Len(t, seen, len(families))

			// The comment's column_family blocks, against the table's schema.
			var cf []string
			for _, line := range strings.Split(got, "\n") {
				if rest, ok := strings.CutPrefix(line, "#   "); ok {
					cf = append(cf, rest)
				}
			}
			table, err := parseHCL("resource \"" + tableType + "\" \"events\" {\n  name = \"events\"\n  instance_name = \"i\"\n" + strings.Join(cf, "\n") + "\n}\n")
			require.NoError(t, err)
			require.Len(t, table, 1)
			assert.Empty(t, schemaErrors(tableType, table[0], schema[tableType]))
			types := columnFamilies(table[0].values())
			assert.Equal(t, map[string]string{"sess": "", "clicks": "", "seq": "", "swept": "", "hits": "intsum"}, types)
		})
	}
}

// TestSchemaErrors checks that the schema check finds what it looks for,
// so that TestGCPolicies can fail.
func TestSchemaErrors(t *testing.T) {
	schema := providerSchema(t)[gcPolicyType]
	blocks, err := parseHCL(`resource "google_bigtable_gc_policy" "x" {
  table = 3
  column_family = "f"
  colour = "red"
  id = "x"
  ignore_warnings = "yes"
  deletion_policy = "KEEP"
  mode = "union"
  gc_rules = "{}"

  max_age {
    days = 3
    duration = "7d"
  }
  max_age {
    duration = "1h"
  }
  max_version {
  }
  bogus {
  }
}`)
	require.NoError(t, err)
	errs := strings.Join(append(schemaErrors("x", blocks[0], schema), providerErrors("x", blocks[0])...), "\n")
	for _, want := range []string{
		"x: table is a number, the schema wants string",
		"x: no argument colour",
		"x: ignore_warnings is a string, the schema wants bool",
		"x: required instance_name missing",
		"x.max_age: days is deprecated",
		"x: 2 max_age blocks, the schema allows 0 to 1",
		"x.max_version: required number missing",
		"x: no block bogus",
		`x: deletion_policy "KEEP" is not PREVENT, ABANDON or DELETE`,
		`x: mode "union" is not UNION or INTERSECTION`,
		"x: max_age needs exactly one of days and duration",
		`x: max_age.duration "7d": time: unknown unit "d" in duration "7d"`,
		"x: gc_rules conflicts with mode, max_age and max_version",
	} {
		assert.Contains(t, errs, want)
	}
	blocks, err = parseHCL("resource \"t\" \"x\" {\n  max_age {\n    duration = \"1h\"\n  }\n  max_version {\n    number = 1\n  }\n}")
	require.NoError(t, err)
	assert.Equal(t, []string{"x: max_age and max_version need a mode"}, providerErrors("x", blocks[0]))
	computed := schemaBlock{Attributes: map[string]schemaAttribute{"c": {Type: "string", Computed: true}}}
	blocks, err = parseHCL("resource \"t\" \"x\" {\n  c = \"v\"\n  lbl \"l\" {\n  }\n}")
	require.NoError(t, err)
	computed.BlockTypes = map[string]schemaBlockType{"lbl": {NestingMode: "single"}}
	assert.Equal(t, []string{"x: c cannot be set (computed only)", "x: block lbl takes no label"}, schemaErrors("x", blocks[0], computed))
}

// TestRuleHCL checks the arguments of policies no strategy has today:
// unions and intersections as mode, and what mode cannot say as gc_rules,
// which the provider reads back to the same policy.
func TestRuleHCL(t *testing.T) {
	age, versions := bigtable.MaxAgePolicy(time.Hour), bigtable.MaxVersionsPolicy(2)
	for _, tt := range []struct {
		p    bigtable.GCPolicy
		want hclRule
	}{
		{bigtable.UnionPolicy(age, versions), hclRule{attrs: [][2]string{{"mode", `"UNION"`}},
			blocks: [][3]string{{"max_age", "duration", `"1h"`}, {"max_version", "number", "2"}}}},
		{bigtable.UnionPolicy(versions, age),
			hclRule{attrs: [][2]string{{"gc_rules", `"{\"mode\":\"union\",\"rules\":[{\"max_version\":2},{\"max_age\":\"1h\"}]}"`}}}},
		{bigtable.IntersectionPolicy(age, versions), hclRule{attrs: [][2]string{{"mode", `"INTERSECTION"`}},
			blocks: [][3]string{{"max_age", "duration", `"1h"`}, {"max_version", "number", "2"}}}},
		{bigtable.NoGcPolicy(), hclRule{}},
		{bigtable.UnionPolicy(age, bigtable.MaxAgePolicy(90*time.Second)),
			hclRule{attrs: [][2]string{{"gc_rules", `"{\"mode\":\"union\",\"rules\":[{\"max_age\":\"1h\"},{\"max_age\":\"90s\"}]}"`}}}},
		{bigtable.UnionPolicy(bigtable.IntersectionPolicy(age, versions), bigtable.MaxAgePolicy(1500*time.Millisecond)),
			hclRule{attrs: [][2]string{{"gc_rules", `"{\"mode\":\"union\",\"rules\":[{\"mode\":\"intersection\",\"rules\":[{\"max_age\":\"1h\"},{\"max_version\":2}]},{\"max_age\":\"1500ms\"}]}"`}}}},
	} {
		got := ruleHCL(tt.p)
		assert.Equal(t, tt.want, got, policy.Describe(tt.p))
		values := map[string]any{}
		for _, a := range got.attrs {
			v, err := parseValue(a[1])
			require.NoError(t, err)
			values[a[0]] = v.text
		}
		for _, b := range got.blocks {
			blocks, err := parseHCL("r {\n" + b[0] + " {\n" + b[1] + " = " + b[2] + "\n}\n}")
			require.NoError(t, err)
			values[b[0]] = blocks[0].values()[b[0]]
		}
		back, err := gcPolicyOf(values, nil)
		require.NoError(t, err)
		assert.Equal(t, policy.Describe(tt.p), policy.Describe(back))
	}
	assert.Equal(t, "90s", formatDuration(90*time.Second))
	assert.Equal(t, "1.5µs", formatDuration(1500*time.Nanosecond))
}

// TestGCPoliciesNever checks a family whose policy is no GC (a move from
// sequence numbers to times): no rule, and no deletion_policy, since
// destroying the resource sets no GC, as it is.
func TestGCPoliciesNever(t *testing.T) {
	start := time.Date(2030, 5, 1, 0, 0, 0, 0, time.UTC)
	m := ttl.Move{From: ttl.SequenceNumbers(2), To: ttl.DefaultExpiration(time.Hour), Start: start}
	require.Equal(t, "never", policy.Describe(m.GCPolicy()))
	got, err := GCPolicies(map[string]ttl.Strategy{"1st.f": m}, Options{Instance: "i", Table: "t"})
	require.NoError(t, err)
	blocks, err := parseHCL(got)
	require.NoError(t, err)
	require.Len(t, blocks, 1)
	assert.Equal(t, []string{gcPolicyType, "t_1st_f"}, blocks[0].labels)
	assert.Equal(t, []string{"instance_name", "table", "column_family"}, blocks[0].order)
	assert.Empty(t, blocks[0].blocks)
	assert.Empty(t, schemaErrors("t", blocks[0], providerSchema(t)[gcPolicyType]))
	got, err = GCPolicies(map[string]ttl.Strategy{"f": m}, Options{Instance: "i", Table: "9t"})
	require.NoError(t, err)
	assert.Contains(t, got, `resource "google_bigtable_gc_policy" "_9t_f" {`)
}

// TestGCPoliciesRefused checks the errors: each names what is at fault
// and wraps its sentinel.
func TestGCPoliciesRefused(t *testing.T) {
	one := map[string]ttl.Strategy{"f": ttl.OneSecond()}
	for _, tt := range []struct {
		families map[string]ttl.Strategy
		opts     Options
		sentinel error
		msg      string
	}{
		{nil, Options{Instance: "i", Table: "t"}, ttl.ErrInvalidStrategy, "no family"},
		{map[string]ttl.Strategy{"f": ttl.DefaultExpiration(-1)}, Options{Instance: "i", Table: "t"}, ttl.ErrInvalidStrategy, `family "f"`},
		{one, Options{Table: "t"}, ttl.ErrInvalidOption, "the instance and the table must be named"},
		{one, Options{Instance: "i"}, ttl.ErrInvalidOption, "the instance and the table must be named"},
		{one, Options{Instance: "i", Table: "t", TableResource: "google_bigtable_instance.x"}, ttl.ErrInvalidOption, `"google_bigtable_instance.x"`},
		{one, Options{Instance: "i", Table: "t", TableResource: "google_bigtable_table.9x"}, ttl.ErrInvalidOption, `"google_bigtable_table.9x"`},
		{one, Options{Instance: "i", Table: "t", TableResource: "google_bigtable_table.a.b"}, ttl.ErrInvalidOption, `"google_bigtable_table.a.b"`},
		{map[string]ttl.Strategy{"a.b": ttl.OneSecond(), "a_b": ttl.OneSecond()}, Options{Instance: "i", Table: "t"}, ttl.ErrInvalidOption,
			`families "a.b" and "a_b" would both be resource google_bigtable_gc_policy.t_a_b`},
	} {
		_, err := GCPolicies(tt.families, tt.opts)
		require.Error(t, err)
		assert.True(t, errors.Is(err, tt.sentinel), err)
		assert.Contains(t, err.Error(), tt.msg)
	}
}

// TestQuote checks that names are written as HCL strings, templates
// escaped.
func TestQuote(t *testing.T) {
	assert.Equal(t, `"a"`, quote("a"))
	assert.Equal(t, `"a$${b}%%{c}\"d"`, quote(`a${b}%{c}"d`))
}

// TestTerraformFmt checks that the resources are as terraform fmt writes
// them (and are HCL it parses), where terraform is installed.
func TestTerraformFmt(t *testing.T) {
	bin, err := exec.LookPath("terraform")
	if err != nil {
		t.Skip("terraform is not installed")
	}
	for _, opts := range []Options{{Instance: "i", Table: "events"}, {Instance: "i", Table: "events", Project: "p",
		TableResource: "google_bigtable_table.events", IgnoreWarnings: true}} {
		got, err := GCPolicies(five(), opts)
		require.NoError(t, err)
		cmd := exec.Command(bin, "fmt", "-check", "-diff", "-no-color", "-")
		cmd.Stdin = strings.NewReader(got)
		cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1", "TF_CLI_CONFIG_FILE=/dev/null")
		out, err := cmd.CombinedOutput()
		assert.NoError(t, err, "terraform fmt:\n%s", out)
	}
	cmd := exec.Command(bin, "fmt", "-check", "-")
	cmd.Stdin = strings.NewReader("resource \"a\" \"b\" {\n x = 1\n}\n")
	cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1", "TF_CLI_CONFIG_FILE=/dev/null")
	assert.Error(t, cmd.Run(), "terraform fmt -check accepts what it would reformat")
}
