// Package terraform writes and checks the Terraform that sets the GC policies of a table's managed families.
//
// GCPolicies writes the google_bigtable_gc_policy resources that the
// families need. Check reads a Terraform plan or state (terraform show
// -json) to find where Terraform would set a GC policy, or do anything
// else, that destroys their data (policy.ErrDataLoss) or leaves a family
// other than its strategy needs (policy.ErrFamilyMismatch).
package terraform

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/rules"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/schedule"
)

// Options name the table that GCPolicies writes resources for.
type Options struct {
	// Instance is the Bigtable instance's name, written as instance_name.
	Instance string

	// Table is the table's name, written as table, and the first part of
	// each resource's name ("events_clicks" for family clicks of table
	// events).
	Table string

	// Project is the project's ID, written as project; "" leaves it to
	// the provider's project.
	Project string

	// TableResource is the address of the table's google_bigtable_table
	// resource in the same module, such as "google_bigtable_table.events".
	// When set, table, instance_name and project refer to it
	// (google_bigtable_table.events.name, .instance_name and .project)
	// instead of naming them, so that Terraform sets the policies once the
	// table exists, in its project; Project is then not used.
	TableResource string

	// IgnoreWarnings writes ignore_warnings = true: Bigtable refuses to
	// relax the GC policy of a replicated table without it.
	IgnoreWarnings bool
}

// The provider's names.
const (
	gcPolicyType = "google_bigtable_gc_policy"
	tableType    = "google_bigtable_table"
	abandon      = "ABANDON"
	counterType  = "intsum" // column_family.type of an aggregate of int64 sums
)

// GCPolicies returns, as HCL, one google_bigtable_gc_policy resource per
// managed family (sorted by family) setting the GC policy its strategy
// needs, with a comment that lists the column_family blocks the table's
// google_bigtable_table resource must hold.
//
// Teams that manage GC policies with Terraform must hold these in their
// configuration: a policy set by policy.Tool.Ensure that Terraform does not know
// is put back to Terraform's at the next terraform apply, which for a
// OneSecond family, say, destroys data. The resources are those of the
// Google provider (hashicorp/google) as of v7.45.0: testdata/provider-schema.md
// says where its schema comes from and what the provider does that the
// schema does not say.
//
// Costs and rationale: docs/api-notes.md#terraformgcpolicies.
func GCPolicies(families map[string]ttl.Strategy, o Options) (string, error) {
	managed, err := rules.CheckFamilies(families)
	if err != nil {
		return "", err
	}
	if err := o.check("GCPolicies"); err != nil {
		return "", err
	}
	names := make([]string, 0, len(managed))
	for name := range managed {
		names = append(names, name)
	}
	sort.Strings(names)
	byResource := map[string]string{}
	for _, name := range names {
		r := resourceName(o.Table, name)
		if other, ok := byResource[r]; ok {
			return "", fmt.Errorf("%w: terraform.GCPolicies: families %q and %q would both be resource %s.%s; rename one",
				ttl.ErrInvalidOption, other, name, gcPolicyType, r)
		}
		byResource[r] = name
	}
	var b strings.Builder
	writeHeader(&b, o, names, managed)
	for _, name := range names {
		s := managed[name]
		writeResource(&b, o, name, s.String(), s.GCPolicy(), ruleOf(s).Counter)
	}
	return b.String(), nil
}

// SchedulePolicy returns, as HCL, the google_bigtable_gc_policy resource
// of the family of table's schedule (o.Table), with the policy that
// policy.SchedulePolicy derives from families. It fails as
// policy.SchedulePolicy does, and as GCPolicies does on o.
func SchedulePolicy(table string, families map[string]ttl.Strategy, o Options) (string, error) {
	p, err := policy.SchedulePolicy(table, o.Table, families)
	if err != nil {
		return "", err
	}
	if err := o.check("SchedulePolicy"); err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# The GC policy that the schedule %q of table %q needs (cellttl).\n", o.Table, table)
	fmt.Fprintf(&b, "# The schedule's %s resource must hold\n#   column_family {\n#     family = %s\n#   }\n", tableType, quote(schedule.Family))
	writeResource(&b, o, schedule.Family, "the schedule of "+table, p, false)
	return b.String(), nil
}

// check refuses, for the function named fn, options that name no
// instance or table, or a table resource that is no address.
func (o Options) check(fn string) error {
	if o.Instance == "" || o.Table == "" {
		return fmt.Errorf("%w: terraform.%s: the instance and the table must be named", ttl.ErrInvalidOption, fn)
	}
	if o.TableResource != "" && !isTableAddress(o.TableResource) {
		return fmt.Errorf("%w: terraform.%s: table resource %q is not an address such as google_bigtable_table.events",
			ttl.ErrInvalidOption, fn, o.TableResource)
	}
	return nil
}

// writeHeader writes the comment that opens the resources: what they are,
// and the column_family blocks of the table.
func writeHeader(b *strings.Builder, o Options, names []string, managed map[string]ttl.Strategy) {
	fmt.Fprintf(b, "# The GC policies that the strategies of table %q need (cellttl).\n", o.Table)
	b.WriteString("# deletion_policy = \"ABANDON\" keeps a policy when its resource is\n")
	b.WriteString("# removed or replaced, instead of setting the family to no GC.\n#\n")
	b.WriteString("# Terraform deletes, with its data, every family that the table's\n")
	fmt.Fprintf(b, "# %s resource does not list: it must hold\n", tableType)
	for _, name := range names {
		fmt.Fprintf(b, "#   column_family {\n#     family = %s\n", quote(name))
		if ruleOf(managed[name]).Counter {
			fmt.Fprintf(b, "#     type   = %s\n", quote(counterType))
		}
		b.WriteString("#   }\n")
	}
}

// writeResource writes the resource of one family, which label names in
// its comment, of policy p, holding counters when counter is set.
func writeResource(b *strings.Builder, o Options, family, label string, p bigtable.GCPolicy, counter bool) {
	fmt.Fprintf(b, "\n# %s: %s, GC %s", family, label, policy.Describe(p))
	if counter {
		b.WriteString(", an aggregate of int64 sums (type = \"intsum\")")
	}
	fmt.Fprintf(b, "\nresource %s %s {\n", quote(gcPolicyType), quote(resourceName(o.Table, family)))
	attrs := [][2]string{}
	switch {
	case o.TableResource != "":
		attrs = append(attrs, [2]string{"project", o.TableResource + ".project"},
			[2]string{"instance_name", o.TableResource + ".instance_name"}, [2]string{"table", o.TableResource + ".name"})
	case o.Project != "":
		attrs = append(attrs, [2]string{"project", quote(o.Project)})
		fallthrough
	default:
		attrs = append(attrs, [2]string{"instance_name", quote(o.Instance)}, [2]string{"table", quote(o.Table)})
	}
	attrs = append(attrs, [2]string{"column_family", quote(family)})
	if policy.Describe(p) != "never" {
		attrs = append(attrs, [2]string{"deletion_policy", quote(abandon)})
	}
	if o.IgnoreWarnings {
		attrs = append(attrs, [2]string{"ignore_warnings", "true"})
	}
	rule := ruleHCL(p)
	attrs = append(attrs, rule.attrs...)
	width := 0
	for _, a := range attrs {
		width = max(width, len(a[0]))
	}
	for _, a := range attrs {
		fmt.Fprintf(b, "  %-*s = %s\n", width, a[0], a[1])
	}
	for _, blk := range rule.blocks {
		fmt.Fprintf(b, "\n  %s {\n    %s = %s\n  }\n", blk[0], blk[1], blk[2])
	}
	b.WriteString("}\n")
}

// An hclRule is a GC policy as the resource's arguments: attributes (mode,
// or gc_rules) and blocks (name, argument, value).
type hclRule struct {
	attrs  [][2]string
	blocks [][3]string
}

// ruleHCL spells p as the resource's arguments: max_age, max_version and
// mode when they can say it (one rule, or an age then a version limit
// joined by a union or an intersection), gc_rules otherwise; nothing for
// no GC.
func ruleHCL(p bigtable.GCPolicy) hclRule {
	var r hclRule
	add := func(c bigtable.GCPolicy) bool {
		switch c := c.(type) {
		case bigtable.MaxAgeGCPolicy:
			r.blocks = append(r.blocks, [3]string{"max_age", "duration", quote(formatDuration(time.Duration(c)))})
			return true
		case bigtable.MaxVersionsGCPolicy:
			r.blocks = append(r.blocks, [3]string{"max_version", "number", strconv.Itoa(int(c))})
			return true
		}
		return false
	}
	var children []bigtable.GCPolicy
	switch p := p.(type) {
	case bigtable.UnionGCPolicy:
		r.attrs, children = [][2]string{{"mode", quote("UNION")}}, p.Children
	case bigtable.IntersectionGCPolicy:
		r.attrs, children = [][2]string{{"mode", quote("INTERSECTION")}}, p.Children
	default:
		if policy.Describe(p) == "never" || add(p) {
			return r
		}
	}
	// The provider joins max_age and max_version in that order: the other
	// order would come back as another policy (which Check and
	// policy.Tool.Check, comparing spellings, would call a mismatch).
	if len(children) == 2 {
		_, age := children[0].(bigtable.MaxAgeGCPolicy)
		_, versions := children[1].(bigtable.MaxVersionsGCPolicy)
		if age && versions && add(children[0]) && add(children[1]) {
			return r
		}
	}
	j, _ := json.Marshal(gcRules(p, true))
	return hclRule{attrs: [][2]string{{"gc_rules", quote(string(j))}}}
}

// gcRules returns p in the JSON form of the resource's gc_rules: at the
// top, an object with "rules" (and "mode" for several); below, a rule is
// {"max_age": "1h"}, {"max_version": 2} or a nested {"mode", "rules"}.
func gcRules(p bigtable.GCPolicy, top bool) map[string]any {
	nest := func(mode string, children []bigtable.GCPolicy) map[string]any {
		rs := make([]any, len(children))
		for i, c := range children {
			rs[i] = gcRules(c, false)
		}
		return map[string]any{"mode": mode, "rules": rs}
	}
	var rule map[string]any
	switch p := p.(type) {
	case bigtable.UnionGCPolicy:
		return nest("union", p.Children)
	case bigtable.IntersectionGCPolicy:
		return nest("intersection", p.Children)
	case bigtable.MaxAgeGCPolicy:
		rule = map[string]any{"max_age": formatDuration(time.Duration(p))}
	case bigtable.MaxVersionsGCPolicy:
		rule = map[string]any{"max_version": int(p)}
	}
	if top {
		return map[string]any{"rules": []any{rule}}
	}
	return rule
}

// formatDuration spells an age as the provider's max_age.duration takes
// it, a Go duration in its largest whole unit: "168h", "90m", "1s",
// "1500ms".
func formatDuration(d time.Duration) string {
	for _, u := range []struct {
		d      time.Duration
		suffix string
	}{{time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}, {time.Millisecond, "ms"}} {
		if d != 0 && d%u.d == 0 {
			return strconv.FormatInt(int64(d/u.d), 10) + u.suffix
		}
	}
	return d.String()
}

// resourceName returns the name of a family's resource: the table's and
// the family's names joined by "_", with the characters a Terraform name
// cannot hold (".") as "_", and "_" before a leading digit.
func resourceName(table, family string) string {
	name := strings.ReplaceAll(table+"_"+family, ".", "_")
	if name[0] >= '0' && name[0] <= '9' {
		name = "_" + name
	}
	return name
}

// isTableAddress reports whether a is google_bigtable_table.NAME, NAME a
// Terraform name.
func isTableAddress(a string) bool {
	name, ok := strings.CutPrefix(a, tableType+".")
	if !ok || name == "" || name[0] >= '0' && name[0] <= '9' || name[0] == '-' {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// quote spells s as an HCL string. Family, table and instance names hold
// no character that HCL escapes differently from JSON; "${" and "%{"
// would start a template, and are escaped.
func quote(s string) string {
	j, _ := json.Marshal(s)
	q := strings.ReplaceAll(string(j), "${", "$${")
	return strings.ReplaceAll(q, "%{", "%%{")
}

// ruleOf returns the rule of s, a strategy the caller has validated.
func ruleOf(s ttl.Strategy) rules.Strategy {
	r, _ := rules.Of(s)
	return r
}
