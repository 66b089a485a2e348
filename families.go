package ttl

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"cloud.google.com/go/bigtable"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cellttl/ttl/internal/rules"
)

// A strategy is only as good as its family's GC policy. CheckFamilies reads
// the policies; EnsureFamilies sets them, refusing any change that would
// delete or hide the cells a family already holds.

// A FamilyStatus is what CheckFamilies found for one managed family: the GC
// policy the family has and the one its strategy needs.
type FamilyStatus struct {
	// Family is the family's name.
	Family string
	// Strategy is the strategy given for it.
	Strategy Strategy
	// Found is the family's GC policy as the Bigtable client reports it:
	// bigtable.NoGcPolicy() when the family has none, nil when the family
	// does not exist.
	Found bigtable.GCPolicy
	// Want is the strategy's GCPolicy.
	Want bigtable.GCPolicy
	// Finished is, for a family in a Move, the policy of the strategy it
	// moves to, which the family has once the move is finished (see
	// FinishMove): it matches too. nil for any other strategy.
	Finished bigtable.GCPolicy
}

// Exists reports whether the family exists.
func (s FamilyStatus) Exists() bool { return s.Found != nil }

// Matches reports whether the family exists with exactly the policy its
// strategy needs (or, in a Move, the policy it has once finished). Any
// other policy, stricter or looser, is a mismatch; so is a status without
// a Want.
func (s FamilyStatus) Matches() bool {
	return s.Found != nil && s.Want != nil &&
		(s.Found.String() == s.Want.String() || s.Finished != nil && s.Found.String() == s.Finished.String())
}

// Policies returns the policy found and the policy wanted, spelled as cbt
// setgcpolicy takes them: "maxage=2d", "maxversions=3",
// "maxage=1d or maxversions=2", "never" for no GC, "missing" for a family
// that does not exist.
func (s FamilyStatus) Policies() (found, want string) {
	return describePolicy(s.Found), describePolicy(s.Want)
}

// String describes the status, such as
// `family "clicks" (DefaultExpiration(48h0m0s)): found never, want maxage=2d`.
// Policies are spelled as cbt setgcpolicy takes them.
func (s FamilyStatus) String() string {
	head := fmt.Sprintf("family %q (%v)", s.Family, s.Strategy)
	switch {
	case !s.Exists():
		return fmt.Sprintf("%s: missing, want %s", head, describePolicy(s.Want))
	case !s.Matches() && s.Finished != nil:
		return fmt.Sprintf("%s: found %s, want %s (or %s once the move is finished)", head,
			describePolicy(s.Found), describePolicy(s.Want), describePolicy(s.Finished))
	case !s.Matches():
		return fmt.Sprintf("%s: found %s, want %s", head, describePolicy(s.Found), describePolicy(s.Want))
	}
	return fmt.Sprintf("%s: %s, as wanted", head, describePolicy(s.Found))
}

// CheckFamilies reads the families of the table with admin and reports, for
// each managed family (sorted by name), whether it exists and whether its GC
// policy is exactly the one its strategy needs. It changes nothing.
//
// The error is nil when every family matches. Otherwise it wraps
// ErrFamilyMismatch and lists every mismatch, with the policy found and the
// policy wanted; a table that does not exist is reported the same way, with
// every family missing. Other errors are Bigtable's, or ErrNilArgument and
// ErrInvalidStrategy for arguments NewTable would refuse.
//
// The client reports GC ages in whole seconds, so a DefaultExpiration whose
// default is not a whole number of seconds cannot be checked: it is refused
// with ErrInvalidStrategy. For the same reason, a policy set by other
// means to a fraction of a second is seen rounded down (cbt's
// maxage=1500ms as maxage=1s).
func CheckFamilies(ctx context.Context, admin *bigtable.AdminClient, table string, families map[string]Strategy) ([]FamilyStatus, error) {
	if ctx == nil || admin == nil {
		return nil, fmt.Errorf("%w: CheckFamilies: nil context or admin client", ErrNilArgument)
	}
	names, managed, err := checkedFamilies(families)
	if err != nil {
		return nil, err
	}
	statuses, exists, err := readFamilies(ctx, admin, table, names, managed)
	if err != nil {
		return statuses, err
	}
	var bad []string
	if !exists {
		bad = append(bad, "the table does not exist")
	}
	for _, s := range statuses {
		if !s.Matches() {
			bad = append(bad, s.String())
		}
	}
	if len(bad) > 0 {
		return statuses, fmt.Errorf("%w: table %q: %s", ErrFamilyMismatch, table, strings.Join(bad, "; "))
	}
	return statuses, nil
}

// checkedFamilies validates the managed families as NewTable does, and
// returns their names sorted. A DefaultExpiration of a fraction of a second
// is refused too: TableInfo reports ages in whole seconds.
func checkedFamilies(families map[string]Strategy) ([]string, map[string]Strategy, error) {
	managed, err := rules.CheckFamilies(families, ErrInvalidStrategy)
	if err != nil {
		return nil, nil, err
	}
	names := make([]string, 0, len(managed))
	for name, own := range managed {
		if age, ok := rules.GCAge(own.GCPolicy()); ok && age%time.Second != 0 {
			return nil, nil, fmt.Errorf("%w: %v (family %q): the Bigtable client reports GC ages in whole seconds, so this policy cannot be checked; use a default of whole seconds",
				ErrInvalidStrategy, own, name)
		}
		names = append(names, name)
	}
	sort.Strings(names)
	return names, managed, nil
}

// readFamilies returns the status of each managed family, and false for a
// table that does not exist (every family is then missing).
func readFamilies(ctx context.Context, admin *bigtable.AdminClient, table string, names []string, managed map[string]Strategy) ([]FamilyStatus, bool, error) {
	info, err := admin.TableInfo(ctx, table)
	exists := true
	switch {
	case status.Code(err) == codes.NotFound:
		exists = false
	case err != nil:
		return nil, false, fmt.Errorf("ttl: table %q: %w", table, err)
	}
	found := map[string]bigtable.GCPolicy{}
	if exists {
		for _, f := range info.FamilyInfos {
			found[f.Name] = f.FullGCPolicy
			if found[f.Name] == nil {
				found[f.Name] = bigtable.NoGcPolicy()
			}
		}
	}
	statuses := make([]FamilyStatus, len(names))
	for i, name := range names {
		s := managed[name]
		statuses[i] = FamilyStatus{Family: name, Strategy: s, Found: found[name], Want: s.GCPolicy()}
		if m, ok := s.(Move); ok {
			statuses[i].Finished = m.To.GCPolicy()
		}
	}
	return statuses, exists, nil
}
