package terraform

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cellttl/ttl/policy"
)

// A Finding is what a plan or a state says Terraform would do to one
// managed family, by one resource.
type Finding struct {
	// Family is the family's name; "" for a resource whose family the
	// plan knows only after apply.
	Family string `json:"family"`
	// Strategy is the family's strategy, as its String method prints it.
	Strategy string `json:"strategy,omitempty"`
	// Address is the resource's address, such as
	// "module.bt.google_bigtable_gc_policy.events_clicks"; "" for
	// Unmanaged.
	Address string `json:"address,omitempty"`
	// Kind is what Terraform would do.
	Kind Kind `json:"kind"`
	// Loss reports a kind that destroys data (Kind.Loss).
	Loss bool `json:"data_loss"`
	// Found is the GC policy Terraform would leave the family with, as
	// policy.Describe spells it; "" when it does not set one.
	Found string `json:"found,omitempty"`
	// Want is the policy the strategy needs.
	Want string `json:"want,omitempty"`
	// Abandon reports deletion_policy = "ABANDON" on a
	// google_bigtable_gc_policy that sets a policy: removing or replacing
	// the resource leaves the policy as it is.
	Abandon bool `json:"abandon"`
	// Reason says why, in a sentence.
	Reason string `json:"reason"`
}

// String describes the finding on one line, such as `family "clicks"
// (DefaultExpiration(168h0m0s)): google_bigtable_gc_policy.events_clicks
// sets maxage=1d, want maxage=7d: data loss: ...`.
func (f Finding) String() string {
	var b strings.Builder
	if f.Family == "" {
		b.WriteString("unknown family")
	} else {
		fmt.Fprintf(&b, "family %q (%s)", f.Family, f.Strategy)
	}
	b.WriteString(": ")
	switch {
	case f.Address == "":
	case f.Found != "":
		fmt.Fprintf(&b, "%s sets %s, want %s: ", f.Address, f.Found, f.Want)
	default:
		fmt.Fprintf(&b, "%s: ", f.Address)
	}
	if f.Loss {
		b.WriteString("data loss: ")
	}
	b.WriteString(f.Reason)
	if f.Kind == Matches && !f.Abandon && f.Found != "never" {
		b.WriteString(`; without deletion_policy = "ABANDON", removing or replacing the resource sets no GC`)
	}
	return b.String()
}

// A Report is what Check found in a plan or a state for the managed
// families of one table.
type Report struct {
	// Plan reports a plan (what Terraform would do); false, a state (what
	// the next apply keeps setting).
	Plan bool `json:"plan"`
	// Table is the table's name.
	Table string `json:"table"`
	// Findings has at least one entry per managed family, sorted by
	// family and address; none when no resource names the table.
	Findings []Finding `json:"findings"`
	// Tables has the names of the tables the file's resources name, of
	// any project and instance, sorted.
	Tables []string `json:"tables"`
}

// Losses returns the findings that destroy data.
func (r *Report) Losses() []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Loss {
			out = append(out, f)
		}
	}
	return out
}

// noResource returns the error of a report with no resource of the table:
// ErrNoResource, naming the tables the file has.
func (r *Report) noResource(where Where) error {
	in := ""
	if where.Project != "" {
		in += fmt.Sprintf(" of project %q", where.Project)
	}
	if where.Instance != "" {
		in += fmt.Sprintf(" in instance %q", where.Instance)
	}
	has := "it names no table"
	if len(r.Tables) > 0 {
		quoted := make([]string, len(r.Tables))
		for i, t := range r.Tables {
			quoted[i] = strconv.Quote(t)
		}
		has = "the tables it has: " + strings.Join(quoted, ", ")
	}
	return fmt.Errorf("%w: no resource of the Terraform %s manages table %q%s (%s)", ErrNoResource, r.what(), r.Table, in, has)
}

// what names the file: plan or state.
func (r *Report) what() string {
	if r.Plan {
		return "plan"
	}
	return "state"
}

// err returns the error of a report: data loss first, then mismatches.
func (r *Report) err() error {
	var lost, other []string
	for _, f := range r.Findings {
		switch {
		case f.Loss:
			lost = append(lost, f.String())
		case f.Kind.Mismatch():
			other = append(other, f.String())
		}
	}
	what := r.what()
	switch {
	case len(lost) > 0:
		return fmt.Errorf("%w: table %q: the Terraform %s: %s", policy.ErrDataLoss, r.Table, what, strings.Join(lost, "; "))
	case len(other) > 0:
		return fmt.Errorf("%w: table %q: the Terraform %s: %s", policy.ErrFamilyMismatch, r.Table, what, strings.Join(other, "; "))
	}
	return nil
}
