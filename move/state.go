package move

import (
	"fmt"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/policy"
)

// A State is how far a move has come.
type State int

const (
	// NotStarted: writers still use the old strategy (the move's Start
	// is ahead), whether or not Start has set the move's policy.
	NotStarted State = iota
	// Started: writers use the new strategy, and the family has not the
	// new strategy's policy yet: cells of the old rule may be live.
	Started
	// Finished: the family has the new strategy's policy (Finish set it),
	// which is not the move's own.
	Finished
)

// stateOf is the state of the move r reports: Finished once the family
// has the final policy and it differs from the move's own (a move whose
// policy is the final one is not finished by having it), else Started
// once writers use the new strategy.
func stateOf(r *Report) State {
	switch {
	case samePolicy(r.Found, r.Final) && !samePolicy(r.Final, r.Window):
		return Finished
	case r.Started:
		return Started
	}
	return NotStarted
}

// samePolicy reports whether a and b are the same GC policy, as
// policy.Describe spells them.
func samePolicy(a, b bigtable.GCPolicy) bool { return policy.Describe(a) == policy.Describe(b) }

// String returns the state as the report's String prints it: "not
// started", "started" or "finished".
func (s State) String() string {
	switch s {
	case NotStarted:
		return "not started"
	case Started:
		return "started"
	case Finished:
		return "finished"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// MarshalText spells the state as String does, for JSON.
func (s State) MarshalText() ([]byte, error) {
	if s < NotStarted || s > Finished {
		return nil, fmt.Errorf("move: no state %d", int(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText reads what MarshalText writes.
func (s *State) UnmarshalText(b []byte) error {
	for _, v := range []State{NotStarted, Started, Finished} {
		if v.String() == string(b) {
			*s = v
			return nil
		}
	}
	return fmt.Errorf("move: no state %q: want not started, started or finished", b)
}
