package policy

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"cloud.google.com/go/bigtable"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/rules"
)

// A Status is what Check found for one managed family: the GC policy the
// family has and the one its strategy needs, and the kind of cell it
// holds and the one it needs. Describe and DescribeType spell them, as
// String and the JSON encoding do.
type Status struct {
	// Family is the family's name.
	Family string
	// Strategy is the strategy given for it, as its String method prints
	// it.
	Strategy string
	// Found is the family's GC policy as the Bigtable client reports it:
	// bigtable.NoGcPolicy() when the family has none, nil when the family
	// does not exist.
	Found bigtable.GCPolicy
	// Want is the strategy's GCPolicy.
	Want bigtable.GCPolicy
	// Finished is, for a family in a ttl.Move, the policy of the strategy
	// it moves to, which the family has once the move is finished: it
	// matches too. nil for any other strategy.
	Finished bigtable.GCPolicy
	// Type is the value type of the family's cells as the client reports
	// it: nil for plain cells (and for a family that does not exist), an
	// aggregate of int64 sums for a counter, another aggregate otherwise.
	Type bigtable.Type
	// WantType is the value type the strategy needs: the aggregate of
	// int64 sums for a ttl.Counter, nil (plain cells) otherwise.
	WantType bigtable.Type
	// Exists reports whether the family exists.
	Exists bool
	// Matches reports whether the family exists with exactly the policy
	// its strategy needs (or, in a move, the policy it has once
	// finished), and holds the kind of cell it needs. Any other policy,
	// stricter or looser, is a mismatch.
	Matches bool
}

// A want is what a family needs: its GC policy, the policy it has once
// its move is finished (nil without a move), its value type, and what
// asks for them, named in messages (a strategy).
type want struct {
	label        string
	gc, finished bigtable.GCPolicy
	typ          bigtable.Type
}

// wantOf returns what a family of strategy s needs.
func wantOf(s ttl.Strategy) want {
	w := want{label: s.String(), gc: s.GCPolicy(), typ: ValueType(s)}
	if m, ok := s.(ttl.Move); ok {
		w.finished = m.To.GCPolicy()
	}
	return w
}

// wantsOf returns what each managed family needs.
func wantsOf(managed map[string]ttl.Strategy) map[string]want {
	out := make(map[string]want, len(managed))
	for name, s := range managed {
		out[name] = wantOf(s)
	}
	return out
}

// newStatus returns the status of family, which needs w, found with
// policy p (nil: missing) holding cells of type t.
func newStatus(family string, w want, p bigtable.GCPolicy, t bigtable.Type) Status {
	st := Status{Family: family, Strategy: w.label, Found: p, Want: w.gc, Finished: w.finished, WantType: w.typ}
	st.Exists = p != nil
	if st.Exists {
		st.Type = t
	}
	found := Describe(p)
	st.Matches = st.Exists && !st.wrongKind() && (found == Describe(st.Want) || st.Finished != nil && found == Describe(st.Finished))
	return st
}

// wrongKind reports a family that exists holding another kind of cell
// than its strategy needs, which no policy change can mend.
func (s Status) wrongKind() bool {
	return s.Exists && DescribeType(s.Type) != DescribeType(s.WantType)
}

// The kinds of cell a family holds.
const (
	typePlain     = "plain"
	typeCounter   = "counter"
	typeAggregate = "aggregate"
)

// DescribeType spells the kind of cell a family of value type t holds:
// "counter" for an aggregate of int64 sums (what a ttl.Counter needs),
// "aggregate" for another aggregate, "plain" for a family without a value
// type.
func DescribeType(t bigtable.Type) string {
	agg, ok := t.(bigtable.AggregateType)
	if !ok {
		return typePlain
	}
	if _, sum := agg.Aggregator.(bigtable.SumAggregator); sum {
		if _, i64 := agg.Input.(bigtable.Int64Type); i64 {
			return typeCounter
		}
	}
	return typeAggregate
}

// ValueType returns the value type a family of strategy s is created
// with: an aggregate of int64 sums for a ttl.Counter, whose cells hold
// 8-byte big-endian sums; nil, a plain family, otherwise.
func ValueType(s ttl.Strategy) bigtable.Type {
	if ruleOf(s).Counter {
		return counterType()
	}
	return nil
}

// counterType is the value type of a counter family: an aggregate of
// int64 sums.
func counterType() bigtable.Type {
	return bigtable.AggregateType{Input: bigtable.Int64Type{}, Aggregator: bigtable.SumAggregator{}}
}

// String describes the status on one line, such as
// `family "clicks" (DefaultExpiration(48h0m0s)): found never, want maxage=2d`.
func (s Status) String() string {
	head := fmt.Sprintf("family %q (%s)", s.Family, s.Strategy)
	found, want := Describe(s.Found), Describe(s.Want)
	switch {
	case s.wrongKind():
		return fmt.Sprintf("%s: found %s cells, want %s cells: a family's kind of cell cannot be changed in place", head, DescribeType(s.Type), DescribeType(s.WantType))
	case !s.Exists:
		return fmt.Sprintf("%s: missing, want %s", head, want)
	case !s.Matches && s.Finished != nil:
		return fmt.Sprintf("%s: found %s, want %s (or %s once the move is finished)", head, found, want, Describe(s.Finished))
	case !s.Matches:
		return fmt.Sprintf("%s: found %s, want %s", head, found, want)
	}
	return fmt.Sprintf("%s: %s, as wanted", head, found)
}

// Check reads the families of the table with the admin client and
// reports, for each managed family (sorted by name), whether it exists
// and whether its GC policy is exactly the one its strategy needs. It
// changes nothing.
//
// The error is nil when every family matches. Otherwise it wraps
// ErrFamilyMismatch and lists every mismatch, with the policy found
// and the policy wanted; a table that does not exist is reported the same
// way, with every family missing. Other errors are Bigtable's, or
// ttl.ErrNilArgument for a nil context and ttl.ErrInvalidStrategy for a
// tool without families (New refuses bad ones).
//
// Costs and rationale: docs/api-notes.md#policytoolcheck.
func (t *Tool) Check(ctx context.Context) ([]Status, error) {
	if err := t.start(ctx, "policy.Check", true); err != nil {
		return nil, err
	}
	table := t.table
	statuses, _, exists, err := readFamilies(ctx, t.admin, table, t.names, wantsOf(t.managed))
	if err != nil {
		return statuses, err
	}
	var bad []string
	if !exists {
		bad = append(bad, "the table does not exist")
	}
	for _, s := range statuses {
		if !s.Matches {
			bad = append(bad, s.String())
		}
	}
	if len(bad) > 0 {
		return statuses, fmt.Errorf("%w: table %q: %s", ErrFamilyMismatch, table, strings.Join(bad, "; "))
	}
	return statuses, nil
}

// checkedFamilies validates the managed families as ttl.NewTable does,
// and returns their names sorted. A DefaultExpiration of a fraction of a
// second is refused too: TableInfo reports ages in whole seconds.
func checkedFamilies(families map[string]ttl.Strategy) ([]string, map[string]ttl.Strategy, error) {
	managed, err := rules.CheckFamilies(families)
	if err != nil {
		return nil, nil, err
	}
	names := make([]string, 0, len(managed))
	for name, own := range managed {
		if age, ok := rules.GCAge(own.GCPolicy()); ok && age%time.Second != 0 {
			return nil, nil, fmt.Errorf("%w: %v (family %q): the Bigtable client reports GC ages in whole seconds, so this policy cannot be checked; use a default of whole seconds",
				ttl.ErrInvalidStrategy, own, name)
		}
		names = append(names, name)
	}
	sort.Strings(names)
	return names, managed, nil
}

// ErrTableNotFound reports a table that does not exist where one must be
// read. Policies returns it, and with it the tools that read a table's
// policies first (the audit, the move's steps, the sweep), so that one
// errors.Is check finds it whichever refused. It is not
// ttl.ErrUnknownFamily: a table is not a family, and a command that
// creates missing families creates a missing table only when told to.
var ErrTableNotFound = errors.New("policy: table not found")

// families reads the GC policy and the value type of every family of the
// table, as Policies does.
func families(ctx context.Context, admin *bigtable.AdminClient, table string) (map[string]bigtable.GCPolicy, map[string]bigtable.Type, error) {
	info, err := admin.TableInfo(ctx, table)
	if status.Code(err) == codes.NotFound {
		return nil, nil, fmt.Errorf("%w: table %q does not exist (%w)", ErrTableNotFound, table, err)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("policy: table %q: %w", table, err)
	}
	found, types := map[string]bigtable.GCPolicy{}, map[string]bigtable.Type{}
	for _, f := range info.FamilyInfos {
		found[f.Name], types[f.Name] = f.FullGCPolicy, f.ValueType
		if found[f.Name] == nil {
			found[f.Name] = bigtable.NoGcPolicy()
		}
	}
	return found, types, nil
}

// readFamilies returns the status of each family named, against what it
// needs (wants), the policies found, and false for a table that does not
// exist (every family is then missing).
func readFamilies(ctx context.Context, admin *bigtable.AdminClient, table string, names []string, wants map[string]want) ([]Status, map[string]bigtable.GCPolicy, bool, error) {
	found, types, err := families(ctx, admin, table)
	exists := true
	switch {
	case status.Code(err) == codes.NotFound:
		exists = false
	case err != nil:
		return nil, nil, false, err
	}
	statuses := make([]Status, len(names))
	for i, name := range names {
		statuses[i] = newStatus(name, wants[name], found[name], types[name])
	}
	return statuses, found, exists, nil
}
