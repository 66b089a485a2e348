package terraform

import (
	"cmp"
	"fmt"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/rules"
	"github.com/cellttl/ttl/policy"
)

// The data-loss rules of a policy Terraform would set, judged without the
// data: policy.Tool.Ensure's rules (see policy.Loss) for any cell a family of
// the strategy may hold. A rule of the policy loses data when it deletes
// a cell its strategy keeps live:
//
//   - under OneSecond or DefaultExpiration(d) (a Counter of one too), a
//     cell stamped ts is live until ts + d (ts under OneSecond): maxage=a
//     deletes live cells when a < d, and none under OneSecond. With a
//     grace g (ttl.Grace), maxage below d + g deletes expired cells the
//     sweep has not reported yet, which the grace keeps for it.
//     maxversions=n deletes the older versions of a column, which are live.
//   - under SequenceNumbers(n), any maxage deletes every cell at once (its
//     timestamps are sequence numbers, in 1970), and maxversions=m < n the
//     versions from the m+1st on.
//   - in a ttl.Move, the move's policy deletes no cell either rule keeps
//     live: an age below its age, or any rule when it is no GC, may.
//
// A union loses data when one of its rules does, an intersection when all
// do; no GC loses none.

// lossOf returns the kind of loss of p for strategy s, and false when p
// deletes no cell s keeps.
func lossOf(s ttl.Strategy, p bigtable.GCPolicy) (Kind, bool) {
	switch p := p.(type) {
	case bigtable.UnionGCPolicy:
		for _, c := range p.Children {
			if k, lost := lossOf(s, c); lost {
				return k, true
			}
		}
		return "", false
	case bigtable.IntersectionGCPolicy:
		first := Kind("")
		for _, c := range p.Children {
			k, lost := lossOf(s, c)
			if !lost {
				return "", false
			}
			first = cmp.Or(first, k)
		}
		return first, first != ""
	case bigtable.MaxAgeGCPolicy:
		return ageLoss(s, time.Duration(p))
	case bigtable.MaxVersionsGCPolicy:
		return versionsLoss(s, int(p))
	}
	return "", false
}

// ageLoss returns the loss of maxage=age for s.
func ageLoss(s ttl.Strategy, age time.Duration) (Kind, bool) {
	r := ruleOf(s)
	switch r.Kind {
	case rules.ByVersions:
		return AgeOnSequence, true
	case rules.ByTime:
		if age < r.Time.Offset {
			return ShorterAge, true
		}
		if kept, _ := rules.GCAge(s.GCPolicy()); r.GraceAge > 0 && age < kept {
			return ShorterGrace, true
		}
		return "", false
	}
	// A move: its own policy's age, or no GC.
	if kept, aged := rules.GCAge(s.GCPolicy()); !aged || age < kept {
		return ShorterAge, true
	}
	return "", false
}

// versionsLoss returns the loss of maxversions=n for s.
func versionsLoss(s ttl.Strategy, n int) (Kind, bool) {
	if r := ruleOf(s); r.Kind == rules.ByVersions {
		return FewerVersions, n < r.Versions
	}
	return VersionsOnTime, true
}

// judge returns the kind of setting p on a family of strategy s, and why,
// in a sentence that names neither.
func judge(s ttl.Strategy, p bigtable.GCPolicy) (Kind, string) {
	found, want := policy.Describe(p), policy.Describe(s.GCPolicy())
	if found == want {
		return Matches, "the policy the strategy needs"
	}
	if m, ok := s.(ttl.Move); ok && found == policy.Describe(m.To.GCPolicy()) {
		return Matches, "the policy of the strategy the move goes to: the move is finished"
	}
	if k, lost := lossOf(s, p); lost {
		return k, lossReasons[k]
	}
	if found == "never" {
		return Differs, "no GC: expired cells stay stored (and billed) for ever"
	}
	return Differs, fmt.Sprintf("not the policy the strategy needs (%s), though it deletes no cell the strategy keeps", want)
}

// lossReasons say what each kind of loss deletes.
var lossReasons = map[Kind]string{
	ShorterAge:     "an age shorter than the strategy's: GC deletes live cells before their expiry",
	ShorterGrace:   "an age shorter than the strategy's grace: GC deletes expired cells before the sweep reports them",
	AgeOnSequence:  "an age on a family of sequence numbers (timestamps in 1970): GC deletes every cell at once",
	FewerVersions:  "fewer versions than the strategy keeps: GC deletes live versions",
	VersionsOnTime: "a version limit on a family whose cells live by time: GC deletes the older versions of a column, which are live",
}
