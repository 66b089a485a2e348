package sweep

import (
	"context"
	"errors"
	"fmt"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/internal/rules"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/schedule"
)

// policies returns the GC policy of each family: as the table has it,
// read through the admin client, or the strategy's own without one. A
// family the table does not have is refused with policy.ErrFamilyMismatch.
func (r *run) policies(ctx context.Context) (map[string]bigtable.GCPolicy, error) {
	s := r.s
	out := map[string]bigtable.GCPolicy{}
	if s.policies == nil {
		for _, f := range s.fams {
			out[f.name] = f.s.GCPolicy()
		}
		return out, nil
	}
	found, err := s.policies.Policies(ctx)
	if err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	for _, f := range s.fams {
		p, ok := found[f.name]
		if !ok {
			return nil, fmt.Errorf("%w: table %q has no family %q to sweep", policy.ErrFamilyMismatch, s.table, f.name)
		}
		out[f.name] = p
	}
	r.deletesEntries = s.scheduled() && s.o.Delete && s.ownsEntries(found)
	if err := r.schedulePolicy(ctx, out); err != nil {
		return nil, err
	}
	return out, nil
}

// schedulePolicy checks, for a sweep given a schedule, that its table has
// the family of entries and that GC keeps an entry at least as long as
// the swept families, under policies, keep the expired cells it names:
// else a sweep that falls behind would find the cells and not their
// entries. It is refused with policy.ErrFamilyMismatch.
func (r *run) schedulePolicy(ctx context.Context, policies map[string]bigtable.GCPolicy) error {
	s := r.s
	if s.o.Schedule == nil {
		return nil
	}
	name := s.o.ScheduleTable
	found, err := s.schedulePolicies.Policies(ctx)
	if errors.Is(err, policy.ErrTableNotFound) {
		return fmt.Errorf("%w: sweep: schedule table %q of table %q does not exist: %w", policy.ErrFamilyMismatch, name, s.table, err)
	}
	if err != nil {
		return fmt.Errorf("sweep: schedule table %q of table %q: %w", name, s.table, err)
	}
	p, ok := found[schedule.Family]
	if !ok {
		return fmt.Errorf("%w: sweep: schedule table %q has no family %q for its entries", policy.ErrFamilyMismatch, name, schedule.Family)
	}
	age, aged := rules.GCAge(p)
	if !aged {
		return nil // entries are kept until deleted
	}
	for _, f := range s.fams {
		keep, ok := f.keep(policies[f.name])
		if ok && keep <= age {
			continue
		}
		kept, fix := "until deleted", "no MaxAge"
		if ok {
			kept, fix = keep.String()+" after expiry", fmt.Sprintf("schedule.Policy(%v)", keep)
		}
		return fmt.Errorf("%w: sweep: schedule table %q keeps entries %v (family %q, GC policy %v), but family %q of table %q keeps expired cells %s: a sweep that fell behind would find cells without their entries; give family %q of the schedule a policy of %s",
			policy.ErrFamilyMismatch, name, age, schedule.Family, p, f.name, s.table, kept, schedule.Family, fix)
	}
	return nil
}
