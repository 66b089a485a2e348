package policy

import (
	"fmt"
	"time"

	"github.com/cellttl/ttl/internal/text"
)

// A Loss is one kind of cell that a change of GC policy would delete or
// hide (or, in FamilyPlan.CollectedSooner, have GC delete sooner), and
// the number of rows that hold such cells. Its fields say which cells:
// each kind (LossKind) sets the fields its constant names, the others
// are zero. String sums it up on one line; the cellttl command says it in
// full.
type Loss struct {
	// Kind is the kind of cell.
	Kind LossKind
	// Rows is the number of rows that hold such cells (schedule entries,
	// for LossEntries: one a row).
	Rows int
	// From is the timestamp of the first such cell the scan looked for
	// (LossExpired, LossEntries); zero when the range is open, from the
	// earliest timestamp (for LossExpired: from the year 2000).
	From time.Time
	// Until is the timestamp of the last such cell the scan looked for,
	// included (LossExpired, LossEntries).
	Until time.Time
	// Age is the GC age of the policy found (LossEarlier, LossSooner, and
	// LossExpired when that policy keeps the cells stored: a longer
	// default, or a grace); zero otherwise.
	Age time.Duration
	// Shift is how much earlier the cells expire (LossEarlier), or how much
	// sooner GC deletes them once expired (LossSooner).
	Shift time.Duration
	// Versions is the number of versions the new policy keeps of a column
	// (LossVersions).
	Versions int
	// Expiries reports, for LossExpired, a strategy that reads timestamps
	// as expiries (OneSecond): the cells are expiries already past, hidden
	// at once and deleted by GC within seconds.
	Expiries bool
}

// A LossKind is a kind of cell a change of GC policy deletes or hides.
// Its String is the name JSON encodes it with.
type LossKind int

// The kinds of Loss, with the fields of Loss each one sets besides Rows.
const (
	// LossSequence: sequence numbers (timestamps before 2000), which an
	// age-based policy deletes all at once.
	LossSequence LossKind = iota + 1
	// LossExpired: cells stamped From to Until, which the new strategy
	// reads as expired (Age: the age found that keeps them stored;
	// Expiries: a strategy of expiries).
	LossExpired
	// LossEarlier: live cells whose expiries move Shift earlier, written
	// under the age found (Age) as a default.
	LossEarlier
	// LossRealTime: real-time timestamps (2000 or later) in a family that
	// becomes SequenceNumbers: they outrank every sequence number.
	LossRealTime
	// LossVersions: columns with more than Versions versions, whose oldest
	// the new policy deletes.
	LossVersions
	// LossSooner: live cells that keep their expiries, but that GC deletes
	// Shift sooner once expired: a grace (the age found, Age) taken off.
	// Reported in FamilyPlan.CollectedSooner, not lost.
	LossSooner
	// LossEntries: schedule entries stamped From to Until, which a
	// schedule's shorter policy deletes at once (EnsureSchedule).
	LossEntries
)

// lossKindNames are the kinds' names, as String and JSON spell them.
var lossKindNames = map[LossKind]string{
	LossSequence: "sequence-numbers", LossExpired: "expired", LossEarlier: "earlier-expiries",
	LossRealTime: "real-time", LossVersions: "versions", LossSooner: "collected-sooner", LossEntries: "schedule-entries",
}

// String names the kind, such as "expired"; an unknown kind is
// "LossKind(N)".
func (k LossKind) String() string {
	if name, ok := lossKindNames[k]; ok {
		return name
	}
	return fmt.Sprintf("LossKind(%d)", int(k))
}

// MarshalText spells the kind as String does, for JSON.
func (k LossKind) MarshalText() ([]byte, error) {
	if _, ok := lossKindNames[k]; !ok {
		return nil, fmt.Errorf("policy: no such loss kind: %d", int(k))
	}
	return []byte(k.String()), nil
}

// UnmarshalText reads a kind as String spells it.
func (k *LossKind) UnmarshalText(b []byte) error {
	for kind, name := range lossKindNames {
		if name == string(b) {
			*k = kind
			return nil
		}
	}
	return fmt.Errorf("policy: no such loss kind: %q", b)
}

// String sums the loss up on one line, such as
// `3 rows hold cells stamped up to 2026-11-18T11:59:24.751Z, which would expire at once`.
func (l Loss) String() string {
	rows := text.Plural(l.Rows, "row holds", "rows hold")
	switch l.Kind {
	case LossSequence:
		return rows + " sequence numbers (timestamps before 2000), which an age-based policy deletes all at once"
	case LossExpired:
		s := fmt.Sprintf("%s cells stamped %s, which would expire at once", rows, l.Span())
		if l.Expiries {
			s = fmt.Sprintf("%s cells stamped %s, which are expiries already past: hidden at once", rows, l.Span())
		}
		if l.Age > 0 {
			s += fmt.Sprintf(" (maxage=%s found keeps them stored)", formatAge(l.Age))
		}
		return s
	case LossEarlier:
		return fmt.Sprintf("%s live cells whose expiries move %s earlier (maxage=%s found)", rows, formatAge(l.Shift), formatAge(l.Age))
	case LossRealTime:
		return rows + " real-time timestamps (2000 or later), which outrank every sequence number"
	case LossVersions:
		return fmt.Sprintf("%s columns with more than %d versions, whose oldest would be deleted", text.Plural(l.Rows, "row has", "rows have"), l.Versions)
	case LossSooner:
		return fmt.Sprintf("%s live cells that GC would delete %s sooner once expired (maxage=%s, a grace, taken off)", rows, formatAge(l.Shift), formatAge(l.Age))
	case LossEntries:
		return fmt.Sprintf("%s stamped %s, which would be deleted at once", text.Plural(l.Rows, "entry", "entries"), l.Span())
	}
	return fmt.Sprintf("%s cells of %v", rows, l.Kind)
}

// Span spells the timestamps From to Until, as String does: "up to
// UNTIL" for an open start, "FROM to UNTIL" otherwise.
func (l Loss) Span() string {
	if l.From.IsZero() {
		return "up to " + text.Time(l.Until)
	}
	return text.Time(l.From) + " to " + text.Time(l.Until)
}
