package ttl

import (
	"fmt"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/internal/rules"
)

// A Move is the strategy of a family whose strategy is being changed while
// it holds data and readers and writers run: the cells written before the
// move keep a rule of their own, the cells written after it follow the new
// strategy, and one server-side filter reads each by its own rule.
//
// It makes possible the changes Bigtable's documentation rules out for a
// family holding data, such as one-second expiration on real timestamps.
//
// A Move is a value, safe for concurrent use, made with a composite
// literal; NewTable refuses an invalid one with ErrInvalidStrategy.
//
// Costs and rationale: docs/api-notes.md#ttlmove.
type Move struct {
	// From is the family's strategy before the move, or nil for a family
	// without one, whose cells carry real write times.
	From Strategy

	// To is the family's strategy after the move.
	To Strategy

	// Start is the instant from which processes write the new way: a
	// whole millisecond, announced in advance.
	Start time.Time

	// Old is what the cells written before Start live by:
	//
	//   - Default: their old rule. From DefaultExpiration(d), d after their
	//     timestamp; from SequenceNumbers(n), among the newest n old
	//     versions of their column, with no end; from a family without a
	//     strategy, no end (the library read them all).
	//   - For(d): d after their timestamp — their write time, for real
	//     timestamps and DefaultExpiration's Default writes ("30 minutes
	//     after its write time"). From SequenceNumbers, whose timestamps
	//     are no times, d after Start.
	//   - Until(t): until t.
	//   - Forever: for ever (from SequenceNumbers, the newest n versions).
	//
	// Choosing a rule that ends sooner than their old one is consent to
	// hide them that much earlier. A rule with no end makes a move that
	// ends only once the old cells are rewritten.
	Old Lifetime

	// Skew is the most a process's clock may differ from another's. The
	// move cannot be finished until Skew after its last old cell expired,
	// so that a reader whose clock lags still finds nothing missing.
	Skew time.Duration
}

// rules returns the rule behind the move.
func (m Move) rules() rules.Move {
	r := rules.Move{Start: m.Start, Skew: m.Skew}
	if m.From != nil {
		r.From = m.From.rule()
	}
	if m.To != nil {
		r.To = m.To.rule()
	}
	switch m.Old.kind {
	case lifeFor:
		r.Old = rules.Old{Kind: rules.OldFor, For: time.Duration(m.Old.n)}
	case lifeUntil:
		r.Old = rules.Old{Kind: rules.OldUntil, Until: m.Old.until()}
	case lifeForever:
		r.Old = rules.Old{Kind: rules.OldForever}
	}
	return r
}

// sides returns the rules of the cells written before the move and after
// it, each with its span of timestamps, and the boundary between them.
func (m Move) sides() (oldSide, newSide rules.Side, boundary bigtable.Timestamp) {
	return m.rules().Sides()
}

// Timestamp returns the timestamp of a cell written at now with life:
// before Start in the old encoding when it can hold the cell on its side of
// the boundary, otherwise in the new one, and from Start on in the new
// encoding when it can, otherwise in the old one. A lifetime neither can
// hold on its own side is refused with ErrLifetime.
//
// Default is the old strategy's default before Start and the new one's
// after it, falling back to the other's; a family without a strategy had
// only Default, a write at now, which the old encoding keeps.
func (m Move) Timestamp(now time.Time, life Lifetime) (bigtable.Timestamp, error) {
	if err := m.valid(); err != nil {
		return 0, err
	}
	oldSide, newSide, _ := m.sides()
	type encoding struct {
		rule rules.Side
		s    Strategy // nil: the old cells of a family without a strategy
	}
	started := !now.Before(m.Start)
	order := []encoding{{newSide, m.To}, {oldSide, m.From}}
	if _, toVersions := m.To.Versions(); toVersions && started {
		// Real timestamps written after the start would outrank every
		// sequence number: from then on, only versions.
		order = order[:1]
	}
	if !started {
		order[0], order[1] = order[1], order[0]
		if _, ok := m.From.(defaultExpiration); ok {
			// Before Start, a DefaultExpiration writer stamps its cells the
			// old way, which may land above the boundary; `start` rewrites
			// those. A cell written the new way there could not be told
			// from them, so the new encoding waits for Start.
			order = order[:1]
		}
	}
	var first error
	for _, e := range order {
		ts, err := m.encode(e.s, e.rule, now, life)
		if err == nil && !e.rule.Span.Contains(ts) {
			err = fmt.Errorf("%w: %v under %v: its timestamp %d would fall on the other side of the boundary",
				ErrLifetime, life, m, ts)
		}
		if err == nil {
			err = m.keeps(e.rule, e.s, ts, now, life)
		}
		if err == nil {
			return ts, nil
		}
		if first == nil {
			first = err
		}
	}
	return 0, first
}

// keeps reports why a cell stamped ts by s on the side of rule r would
// not live as written at now with life: the side's rule would give a cell
// of DefaultExpiration another expiry than its own (old cells that live
// Until a time or Forever), or the cell would be born expired (a side
// whose rule has ended).
func (m Move) keeps(r rules.Side, s Strategy, ts bigtable.Timestamp, now time.Time, life Lifetime) error {
	e, ok := r.Expiry(ts)
	if s != nil && r.Kind != rules.ByTime {
		if s.rule().Kind == rules.ByTime {
			if want, wok := s.ExpiresAt(ts); wok != ok || !want.Equal(e) {
				return fmt.Errorf("%w: %v under %v: the old cells' rule (Old: %v) would not keep its expiry", ErrLifetime, life, m, m.Old)
			}
		}
	}
	if ok && !e.After(now) {
		return fmt.Errorf("%w: %v under %v: the old cells' rule (Old: %v) ended at %v, not after now (%v)",
			ErrExpired, life, m, m.Old, e.UTC().Format(time.RFC3339Nano), now.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

// encode returns the timestamp of a cell on one side of the move: by the
// side's rule, with s the strategy that writes it (nil for the real
// timestamps of a family without a strategy).
func (m Move) encode(s Strategy, r rules.Side, now time.Time, life Lifetime) (bigtable.Timestamp, error) {
	if life.kind == lifeDefault {
		life = m.defaultLife(now)
	}
	_, toVersions := m.To.Versions()
	switch {
	case s == nil && (life.kind == lifeDefault || life.kind == lifeVersion && toVersions):
		// A write at now, as the family had before: Default, or a Version
		// written before the move to SequenceNumbers starts, whatever
		// rule Old gives the old cells.
	case r.Kind == rules.ByTime:
		return timestamp(r.Time, now, life, m.String)
	case s != nil:
		return s.Timestamp(now, life)
	default:
		return 0, fmt.Errorf("%w: %v under %v: cells written the old way, with a real timestamp, take Default (or, in a move to SequenceNumbers, Version)", ErrLifetime, life, m)
	}
	ms, inRange := rules.FloorMillis(now)
	if inRange != 0 {
		return 0, fmt.Errorf("%w: now (%v) is outside 1970 to the year 294,247", ErrOutOfRange, now.UTC().Format(time.RFC3339Nano))
	}
	return bigtable.Timestamp(ms * 1000), nil
}

// defaultLife is the lifetime Default stands for at now: the old
// strategy's default before Start and the new one's from then on, or the
// other's where that one has none. A family without a strategy's default
// is a write at now, which Default itself stands for.
func (m Move) defaultLife(now time.Time) Lifetime {
	order := []Strategy{m.From, m.To}
	if !now.Before(m.Start) {
		order[0], order[1] = order[1], order[0]
	}
	for _, s := range order {
		switch s := s.(type) {
		case nil:
			return Default
		case defaultExpiration:
			return For(s.d)
		}
	}
	return Default
}

// Filter passes the cells of the family live at now: those on the old
// side of the boundary by the old rule, those on the new side by the new
// strategy's, in one interleave.
func (m Move) Filter(now time.Time) bigtable.Filter {
	if m.valid() != nil {
		return bigtable.BlockAllFilter()
	}
	oldSide, newSide, _ := m.sides()
	var branches []bigtable.Filter
	for _, r := range []rules.Side{oldSide, newSide} {
		if f := r.Filter(now); f != nil {
			branches = append(branches, f)
		}
	}
	switch len(branches) {
	case 0:
		return bigtable.BlockAllFilter()
	case 1:
		return branches[0]
	}
	return bigtable.InterleaveFilters(branches...)
}

// GCPolicy returns the family's policy during the move: one that deletes
// no cell either rule keeps live. Between time rules it is the oldest age
// either allows (MaxAge of the old cells' lifetime, or of the new default
// if longer), plus the longer grace of From and To (see Grace), in whole
// seconds; where the rules disagree (sequence numbers and times, old cells
// that never expire) it is no GC at all.
func (m Move) GCPolicy() bigtable.GCPolicy {
	if m.valid() != nil {
		return bigtable.NoGcPolicy()
	}
	if age, ok := m.rule().GCAge(); ok {
		return bigtable.MaxAgePolicy(age)
	}
	return bigtable.NoGcPolicy()
}

// ExpiresAt returns the expiry of a cell stamped ts by the rule of its side
// of the boundary.
func (m Move) ExpiresAt(ts bigtable.Timestamp) (time.Time, bool) {
	oldSide, newSide, _ := m.sides()
	if oldSide.Span.Contains(ts) {
		return oldSide.Expiry(ts)
	}
	return newSide.Expiry(ts)
}

// Versions returns the new strategy's.
func (m Move) Versions() (int, bool) { return m.To.Versions() }

// String returns the move as the Go expression that makes it, such as
// "Move{From: nil, To: OneSecond(), Start: 2030-05-01T00:00:00Z, Old: For(30m0s), Skew: 1m0s}".
func (m Move) String() string {
	from := "nil"
	if m.From != nil {
		from = m.From.String()
	}
	to := "nil"
	if m.To != nil {
		to = m.To.String()
	}
	return fmt.Sprintf("Move{From: %s, To: %s, Start: %s, Old: %v, Skew: %v}",
		from, to, m.Start.UTC().Format(time.RFC3339Nano), m.Old, m.Skew)
}

func (m Move) valid() error {
	bad := func(why string, args ...any) error {
		return fmt.Errorf("%w: %v: %s", ErrInvalidStrategy, m, fmt.Sprintf(why, args...))
	}
	_, fromCounter := m.From.(counterStrategy)
	if _, toCounter := m.To.(counterStrategy); fromCounter || toCounter {
		return bad("a counter family cannot be moved: its cells are windows that expire on their own; count in a new family and read both until the old one's windows have expired")
	}
	switch m.To.(type) {
	case nil:
		return bad("no strategy to move to")
	case Move:
		return bad("a move cannot move to a move")
	}
	if err := m.To.valid(); err != nil {
		return err
	}
	if _, isMove := m.From.(Move); isMove {
		return bad("a move cannot move from a move; finish it first")
	}
	if m.From != nil {
		if err := m.From.valid(); err != nil {
			return err
		}
	}
	fromVersions := m.From != nil && m.From.rule().Kind == rules.ByVersions
	_, toVersions := m.To.Versions()
	_, fromDefault := m.From.(defaultExpiration)
	_, toOneSecond := m.To.(oneSecond)
	switch {
	case m.From == nil:
	case fromVersions && !toVersions:
	case fromDefault && toOneSecond:
	default:
		return bad("moves go from a family without a strategy to any strategy, from SequenceNumbers to OneSecond or DefaultExpiration, and from DefaultExpiration to OneSecond; other changes need no move: policy.Tool.Ensure makes them, or refuses those that lose data")
	}
	switch {
	case m.Start.IsZero() || !m.Start.Truncate(time.Millisecond).Equal(m.Start) || bigtable.Time(m.Start) <= rules.RealTime:
		return bad("Start must be a whole millisecond after 2000-01-01")
	case m.Skew < 0:
		return bad("Skew must not be negative")
	}
	switch m.Old.kind {
	case lifeVersion:
		return bad("old cells take Default, For, Until or Forever, not %v", m.Old)
	case lifeFor:
		if m.Old.n <= 0 || time.Duration(m.Old.n)%time.Millisecond != 0 {
			return bad("For in Old must be a positive whole number of milliseconds")
		}
	case lifeUntil:
		if !m.Old.until().After(m.Start) && !fromVersions {
			// A cell written the old way just before Start must live.
			return bad("Until in Old must be after Start")
		}
	}
	return nil
}

// Rule returns the move's rule, or the error that makes it invalid, for
// the module's tools; the result's type is internal to the module.
func (m Move) Rule() (rules.Strategy, error) { return checkedRule(m) }

// rule returns the move's rule: each cell follows its side's.
func (m Move) rule() rules.Strategy { return m.rules().Strategy() }

// supersedes returns, for a cell written the new way in a move from real
// timestamps to sequence numbers, the old cells of its column: they would
// otherwise outrank every sequence number.
func (m Move) supersedes(ts bigtable.Timestamp) (rules.Range, bool) {
	oldSide, newSide, _ := m.sides()
	if m.From == nil && newSide.Kind == rules.ByVersions && newSide.Span.Contains(ts) {
		return oldSide.Span, true
	}
	return rules.Range{}, false
}

// readModifyWrite allows read-modify-write where the rule of the side the
// server's now falls on lives on server timestamps, and reports both
// sides' expired cells. The server's clock is known only to within Skew
// of now: within Skew of the boundary either side may stamp the cell, and
// a cell stamped on the other side would be read by the other rule (past
// Start under OneSecond, expired at once), so read-modify-write is
// refused there.
func (m Move) readModifyWrite(now time.Time, margin time.Duration) (bool, []rules.Range) {
	if m.valid() != nil {
		return false, nil
	}
	oldSide, newSide, _ := m.sides()
	onOld := oldSide.Span.Contains(bigtable.Time(now.Add(-m.Skew)))
	if onOld != oldSide.Span.Contains(bigtable.Time(now.Add(m.Skew))) {
		return false, nil
	}
	r := newSide
	if onOld {
		r = oldSide
	}
	ok := r.Kind == rules.ByTime && r.Time.ServerTimestamps() || r.Kind == rules.None && m.From == nil
	return ok, append(oldSide.Expired(now.Add(margin)), newSide.Expired(now.Add(margin))...)
}
