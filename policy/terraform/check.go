package terraform

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"sort"
	"strings"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/rules"
	"github.com/cellttl/ttl/policy"
)

// A Kind is what Terraform would do to a family's GC policy, or to the
// family, judged against its strategy.
type Kind string

// The kinds of Finding. Those whose Loss method is true destroy data.
const (
	// Matches: Terraform sets the policy the strategy needs (or, in a
	// move, the policy of the strategy it goes to).
	Matches Kind = "matches"
	// Unmanaged: no google_bigtable_gc_policy of the file sets the
	// family's policy, so Terraform leaves it as it is.
	Unmanaged Kind = "unmanaged"
	// Abandoned: the plan drops the resource, and its deletion_policy
	// ("ABANDON", or "PREVENT", which fails the apply) leaves the policy
	// as it is.
	Abandoned Kind = "abandoned"
	// Differs: Terraform sets another policy, which deletes no cell the
	// strategy keeps: a longer age, more versions, no GC (a resource
	// destroyed without deletion_policy = "ABANDON").
	Differs Kind = "differs"
	// ShorterAge: an age shorter than the strategy's, which deletes live
	// cells (or, in a move, an age below the move's).
	ShorterAge Kind = "shorter-age"
	// ShorterGrace: an age shorter than the strategy's grace (ttl.Grace),
	// which deletes expired cells before the sweep reports them.
	ShorterGrace Kind = "shorter-grace"
	// AgeOnSequence: an age on a SequenceNumbers family, which deletes
	// every cell (its timestamps are sequence numbers, in 1970).
	AgeOnSequence Kind = "age-on-sequence"
	// FewerVersions: fewer versions than SequenceNumbers keeps.
	FewerVersions Kind = "fewer-versions"
	// VersionsOnTime: a version limit on a family whose cells live by
	// time, which deletes the live older versions of a column.
	VersionsOnTime Kind = "versions-on-time"
	// FamilyDeleted: the plan updates the table's google_bigtable_table
	// and its column_family blocks no longer list the family, which the
	// provider deletes with its data.
	FamilyDeleted Kind = "family-deleted"
	// TableDeleted: the plan destroys the table's google_bigtable_table
	// (or replaces it), deleting every family.
	TableDeleted Kind = "table-deleted"
	// NotInTable: the table's google_bigtable_table does not list the
	// family: the first apply after the family exists deletes it, and
	// every cell in it.
	NotInTable Kind = "not-in-table"
	// WrongType: the table's google_bigtable_table gives the family
	// another kind of cell than its strategy needs (type = "intsum" for a
	// ttl.Counter, none otherwise).
	WrongType Kind = "wrong-type"
	// Invalid: the provider refuses the resource's values (max_age and
	// max_version without mode, gc_rules it cannot read): the apply fails.
	Invalid Kind = "invalid"
	// Unknown: the plan knows the policy, the table or the family only
	// after apply; check the plan of the next apply, or the state after.
	Unknown Kind = "unknown"
)

// Loss reports whether the kind destroys data.
func (k Kind) Loss() bool {
	switch k {
	case ShorterAge, ShorterGrace, AgeOnSequence, FewerVersions, VersionsOnTime, FamilyDeleted, TableDeleted, NotInTable:
		return true
	}
	return false
}

// Mismatch reports whether the kind leaves the family other than its
// strategy needs, or cannot tell: every kind but Matches, Unmanaged and
// Abandoned.
func (k Kind) Mismatch() bool { return k != Matches && k != Unmanaged && k != Abandoned }

// Where names the table whose resources Check judges. A resource counts
// when its table is Table and, for each of Project and Instance that is
// not "", the resource's is the same or unknown: an instance is matched by
// the last part of its path (projects/p/instances/i), a project by the
// resource's project or its instance's path.
type Where struct {
	Project, Instance, Table string
}

// ErrNoResource reports a plan or state of which no resource names the
// table (in the project and instance given): a mistyped table, or a file
// of another configuration. Check returns it with a report whose Tables
// lists the tables the file has.
var ErrNoResource = errors.New("terraform: no resource manages the table")

// Check reads the JSON of terraform show -json, of a plan or of a state,
// and reports, for each managed family of the table where names, what
// Terraform would do to it: the policy each google_bigtable_gc_policy of
// the family sets, judged by the data-loss rules of package policy, and
// what the table's google_bigtable_table would do to the family.
//
// The error wraps ErrNoResource when no resource names the table,
// policy.ErrDataLoss when a finding destroys data and
// policy.ErrFamilyMismatch for another mismatch; input that is no
// Terraform JSON wraps ErrNotTerraform.
//
// Costs and rationale: docs/api-notes.md#terraformcheck.
func Check(r io.Reader, where Where, families map[string]ttl.Strategy) (*Report, error) {
	managed, err := rules.CheckFamilies(families)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, fmt.Errorf("%w: terraform.Check: nil reader", ttl.ErrNilArgument)
	}
	s, err := readShow(r)
	if err != nil {
		return nil, err
	}
	rep := &Report{Plan: s.plan, Table: where.Table}
	managedBy := map[string]bool{}
	seen, tables := false, map[string]bool{}
	for _, res := range s.resources {
		nameKey := "table"
		if res.typ == tableType {
			nameKey = "name"
		}
		values, unknown := res.values()
		match, known := ours(values, unknown, nameKey, where)
		seen = seen || match || !known
		if known && str(values, nameKey) != "" {
			tables[str(values, nameKey)] = true
		}
		if res.typ == tableType {
			rep.Findings = append(rep.Findings, tableFindings(res, where, managed)...)
			continue
		}
		f, ok := gcPolicyFinding(res, where, managed)
		if ok {
			rep.Findings = append(rep.Findings, f)
			managedBy[f.Family] = true
		}
	}
	for name := range tables {
		rep.Tables = append(rep.Tables, name)
	}
	sort.Strings(rep.Tables)
	if !seen {
		return rep, rep.noResource(where)
	}
	for name, strategy := range managed {
		if !managedBy[name] {
			rep.Findings = append(rep.Findings, Finding{Family: name, Strategy: strategy.String(), Kind: Unmanaged,
				Want: policy.Describe(strategy.GCPolicy()), Reason: "no google_bigtable_gc_policy sets its policy: Terraform leaves it as it is"})
		}
	}
	sort.SliceStable(rep.Findings, func(i, j int) bool {
		a, b := rep.Findings[i], rep.Findings[j]
		return a.Family < b.Family || a.Family == b.Family && a.Address < b.Address
	})
	return rep, rep.err()
}

// ours reports whether values name the table (and its instance and
// project, when both are known), and whether the plan knows the table.
func ours(values map[string]any, unknown any, nameKey string, where Where) (match, known bool) {
	if unknownAt(unknown, nameKey) {
		return false, false
	}
	if str(values, nameKey) != where.Table {
		return false, true
	}
	in, project := str(values, "instance_name"), str(values, "project")
	if unknownAt(unknown, "instance_name") {
		in = ""
	}
	if unknownAt(unknown, "project") {
		project = ""
	}
	if parts := strings.Split(in, "/"); len(parts) == 4 && parts[0] == "projects" && parts[2] == "instances" {
		project = cmp.Or(project, parts[1])
		if parts[1] != project {
			return false, true
		}
	}
	sameInstance := where.Instance == "" || in == "" || path.Base(in) == where.Instance
	sameProject := where.Project == "" || project == "" || project == where.Project
	return sameInstance && sameProject, true
}

// values returns the resource's values (and what of them the plan knows
// only after apply): those after the change, or before for a change that
// destroys or forgets it.
func (res resource) values() (map[string]any, any) {
	if res.after == nil {
		return res.before, nil
	}
	return res.after, res.unknown
}

// gcPolicyFinding judges one google_bigtable_gc_policy, and reports false
// for one of another table or an unmanaged family.
func gcPolicyFinding(res resource, where Where, managed map[string]ttl.Strategy) (Finding, bool) {
	values, unknown := res.values()
	match, known := ours(values, unknown, "table", where)
	if known && unknownAt(unknown, "column_family") {
		known = false
	}
	if !known {
		return Finding{Address: res.address, Kind: Unknown, Reason: "its table or column family is known only after apply"}, true
	}
	s, isManaged := managed[str(values, "column_family")]
	if !match || !isManaged {
		return Finding{}, false
	}
	f := Finding{Family: str(values, "column_family"), Strategy: s.String(), Address: res.address, Want: policy.Describe(s.GCPolicy())}
	dropped := slices.Contains(res.actions, "delete") || slices.Contains(res.actions, "forget")
	kept := str(res.before, "deletion_policy") == abandon || str(res.before, "deletion_policy") == "PREVENT"
	switch {
	case dropped && res.after == nil && (kept || slices.Contains(res.actions, "forget")):
		f.Kind, f.Reason = Abandoned, "the plan drops the resource and leaves the policy as it is"
		return f, true
	case dropped && res.after == nil || slices.Equal(res.actions, []string{"create", "delete"}) && !kept:
		// Destroying the resource, last under create_before_destroy,
		// sets no GC.
		f.Found = "never"
		f.Kind, _ = judge(s, bigtable.NoGcPolicy())
		f.Reason = `the plan destroys the resource without deletion_policy = "ABANDON", which sets no GC`
		if f.Kind == Differs {
			f.Reason += ": expired cells stay stored (and billed) for ever"
		}
		return f, true
	}
	p, err := gcPolicyOf(values, unknown)
	switch {
	case errors.Is(err, errUnknown):
		f.Kind, f.Reason = Unknown, "its "+err.Error()
		return f, true
	case err != nil:
		f.Kind, f.Reason = Invalid, "the provider refuses it: "+err.Error()
		return f, true
	}
	f.Found = policy.Describe(p)
	f.Kind, f.Reason = judge(s, p)
	f.Loss = f.Kind.Loss()
	f.Abandon = str(values, "deletion_policy") == abandon
	return f, true
}

// tableFindings judges what one google_bigtable_table does to the managed
// families: nothing for another table.
func tableFindings(res resource, where Where, managed map[string]ttl.Strategy) []Finding {
	values, unknown := res.values()
	if match, known := ours(values, unknown, "name", where); !match || !known {
		return nil
	}
	destroyed := slices.Contains(res.actions, "delete") && str(res.before, "deletion_policy") != abandon &&
		str(res.before, "deletion_policy") != "PREVENT"
	if res.actions != nil && res.after == nil && !destroyed {
		return nil // forgotten, or abandoned: the table stays as it is
	}
	before, after := columnFamilies(res.before), columnFamilies(res.after)
	if res.actions == nil {
		before = after
	}
	var out []Finding
	for name, s := range managed {
		f := Finding{Family: name, Strategy: s.String(), Address: res.address}
		wantType := policy.DescribeType(nil)
		if ruleOf(s).Counter {
			wantType = policy.DescribeType(bigtable.AggregateType{Input: bigtable.Int64Type{}, Aggregator: bigtable.SumAggregator{}})
		}
		t, inAfter := after[name]
		_, inBefore := before[name]
		switch {
		case destroyed:
			f.Kind, f.Reason = TableDeleted, "the plan destroys the table, and every family with it"
		case unknownAt(unknown, "column_family"):
			f.Kind, f.Reason = Unknown, "the table's column families are known only after apply"
		case !inAfter && inBefore:
			f.Kind, f.Reason = FamilyDeleted, "the table's column_family blocks no longer list the family: the provider deletes it, with its data"
		case !inAfter:
			f.Kind, f.Reason = NotInTable, "the table's column_family blocks do not list the family: the first apply after the family exists deletes it and every cell in it"
		default:
			got, err := typeOf(t)
			switch {
			case err != nil:
				f.Kind, f.Reason = Invalid, "the provider refuses its "+err.Error()
			case got != wantType:
				f.Kind, f.Reason = WrongType, fmt.Sprintf("the table gives it %s cells, its strategy needs %s cells (a counter is type = %q)", got, wantType, counterType)
			default:
				continue
			}
		}
		f.Loss = f.Kind.Loss()
		out = append(out, f)
	}
	return out
}

// columnFamilies returns a table's column_family blocks: the type of each
// family, by name.
func columnFamilies(values map[string]any) map[string]string {
	out := map[string]string{}
	for _, cf := range list(values, "column_family") {
		if m, ok := cf.(map[string]any); ok {
			out[str(m, "family")] = str(m, "type")
		}
	}
	return out
}
