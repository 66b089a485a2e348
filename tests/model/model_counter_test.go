package model_test

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
)

// TestModelCounters checks counters that expire, DESIGN.md's "Counters
// that expire", against a reference model written from it alone: a
// counter family holds one cell per column and window, stamped with the
// window's expiry less the strategy's offset, whose value is the sum of
// every increment made in the window; a window is live until its expiry
// (less the read margin) and never from it on.
//
// Runs of random operations go through tables whose counter families
// policy.Ensure created as aggregate families: Counter(OneSecond()),
// Counter(DefaultExpiration(48h)) and Counter(Grace(DefaultExpiration(2s),
// 3s)), beside a plain OneSecond family. Each column counts in a window of
// its own (ctrWindows: sizes from 3ms to 7 days, with and without Keep).
// The operations:
//
//   - Apply of Mutation.Add, one to eight increments (positive, negative,
//     zero) to one or more columns and families, now and then with an Add
//     that must be refused (a plain family, a Window that does not fit in
//     days, one whose window expires within the read margin), now and
//     then beside a Set in the plain family (or, refused, in a counter
//     family) that the Adds' refusal must take down with them, in either
//     branch of a conditional mutation, or by a second Table whose clock
//     runs ahead; a Mutation is now and then applied again, later, in the
//     window of its new call;
//   - ApplyBulk of such mutations, a row sometimes twice, one Mutation
//     sometimes for several rows;
//   - clock moves, forward only, by a nanosecond to a window's whole
//     life, aimed at window boundaries and at the instants windows hide
//     (and a nanosecond or a microsecond either side);
//   - ReadCounter (every live window, newest first), SumCounter over the
//     last n windows (n at and past what Keep allows), each mostly with
//     the column's Window and now and then with another one, and ReadRow
//     through the Table with ExpiresAt of every cell;
//   - GC steps, which delete by hand, raw, what the GC policy policy.Ensure
//     gave each family lets Bigtable delete at the clock's instant (the
//     emulator's own GC runs on the real clock, years before these
//     cells): the policy must be the strategy's, and it must delete no
//     live window.
//
// Every outcome must be the model's, and every 16 operations the raw
// table, read without a filter, must store exactly the model's cells.
//
// Two table variants run in parallel: one plain, one with a read margin
// of 700ms and RecordWriteTime, under which each Set has its write-time
// companion and no Add has one, and ReadRow asks for the write times
// (WithWriteTimes): a counter cell has none (ttl.WriteTime). Each
// variant's operations are split in segments of 500 on fresh tables,
// each starting at its own instant after base (2030), far from the
// emulator's real-clock GC, and each scaling its clock moves to one of
// the windows.
//
// CELLTTL_COUNTER_OPS sets the number of operations over both variants
// (default 100,000; 25,000 under the race detector; 10,000 with -short),
// CELLTTL_COUNTER_SEED the seed
// (default fixed, ctrSeed). A divergence prints the seed, the variant,
// the segment and the operation's index, and the shortest list of
// operations found that still diverges.
//
// The test is spread over three files: this one (the tables and the
// model), model_counter_run_test.go (applying a segment to a Table and
// to the model, comparing, counting, shrinking a failure) and
// model_counter_gen_test.go (the operations and their generator).
func TestModelCounters(t *testing.T) {
	n, seed := ctrSettings(t)
	for i, v := range ctrVariants {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			e := emulator.StartForTest(t)
			st := newCtrStats()
			total := n / len(ctrVariants)
			for s := 0; s*ctrSegmentLen < total; s++ {
				segSeed := seed + uint64(i)<<32 + uint64(s)
				seg := generateCounters(segSeed, s, v, min(ctrSegmentLen, total-s*ctrSegmentLen))
				idx, msg := ctrRun(t, e, v, fmt.Sprintf("seg%d", s), seg, st)
				if idx >= 0 {
					ctrReport(t, e, seed, v, s, seg, idx, msg)
					return
				}
			}
			t.Logf("%s: %d operations in %v: %v", v.name, total, time.Since(start).Round(time.Millisecond), st)
			if msg := st.tooLittle(total, v); msg != "" {
				t.Errorf("the run exercised too little (%s): %v", msg, st)
			}
		})
	}
}

// ctrSeed is the seed of TestModelCounters unless CELLTTL_COUNTER_SEED
// says otherwise.
const ctrSeed = 20300430

// ctrSegmentLen is the number of operations run on one table.
const ctrSegmentLen = 500

// ctrSettings returns the number of operations and the seed of
// TestModelCounters, and logs them.
func ctrSettings(t *testing.T) (int, uint64) {
	t.Helper()
	n := 100_000
	switch {
	case testing.Short():
		n = 10_000
	case testkit.Race:
		n = 25_000 // the race detector makes each request several times slower
	}
	n = int(envInt(t, "CELLTTL_COUNTER_OPS", int64(n)))
	seed := uint64(envInt(t, "CELLTTL_COUNTER_SEED", ctrSeed))
	t.Logf("CELLTTL_COUNTER_SEED=%d CELLTTL_COUNTER_OPS=%d", seed, n)
	return n, seed
}

// ctrVariant is a table configuration of the counter model.
type ctrVariant struct {
	name       string
	margin     time.Duration // WithReadMargin
	writeTimes bool          // RecordWriteTime
}

var ctrVariants = []ctrVariant{
	{"plain", 0, false},
	{"margin and write times", 700 * time.Millisecond, true},
}

// options are the variant's Table options, with clock.
func (v ctrVariant) options(clock func() time.Time) []ttl.Option {
	opts := []ttl.Option{ttl.WithClock(clock), ttl.WithReadMargin(v.margin)}
	if v.writeTimes {
		opts = append(opts, ttl.RecordWriteTime())
	}
	return opts
}

// ctrFamily is a family of the counter model's tables.
type ctrFamily struct {
	name    string
	s       ttl.Strategy
	offset  time.Duration // a cell's expiry less its timestamp
	gc      time.Duration // the MaxAge of its GC policy
	counter bool
}

var ctrFamilies = []ctrFamily{
	{"hits", ttl.Counter(ttl.OneSecond()), 0, time.Second, true},
	{"daily", ttl.Counter(ttl.DefaultExpiration(48 * time.Hour)), 48 * time.Hour, 48 * time.Hour, true},
	{"brief", ttl.Counter(ttl.Grace(ttl.DefaultExpiration(2*time.Second), 3*time.Second)), 2 * time.Second, 5 * time.Second, true},
	{"sess", ttl.OneSecond(), 0, time.Second, false}, // plain: Add and the counter reads are refused
}

func ctrFamilyNamed(name string) ctrFamily {
	for _, f := range ctrFamilies {
		if f.name == name {
			return f
		}
	}
	panic("no counter model family " + name)
}

// ctrStrategies are the families as NewTable and policy.Ensure take them.
func ctrStrategies() map[string]ttl.Strategy {
	fams := map[string]ttl.Strategy{}
	for _, f := range ctrFamilies {
		fams[f.name] = f.s
	}
	return fams
}

// ctrWindows are the windows the columns count in: column "c<i>" in
// ctrWindows[i].
var ctrWindows = []ttl.Window{
	{Size: 250 * time.Millisecond, Keep: 1750 * time.Millisecond},
	{Size: time.Second},
	{Size: time.Second, Keep: 4 * time.Second},
	{Size: 10 * time.Second, Keep: 50 * time.Second},
	{Size: time.Minute, Keep: 4*time.Minute + 30*time.Second},
	{Size: 5 * time.Minute},
	{Size: time.Hour, Keep: 23 * time.Hour},
	{Size: 24 * time.Hour},
	{Size: 48 * time.Hour, Keep: 24*time.Hour + time.Millisecond},
	{Size: 3 * time.Millisecond, Keep: 700 * time.Millisecond},
	{Size: 7 * 24 * time.Hour}, // from a Thursday, as 1970-01-01 was
}

// ctrColumnWindow is the window column col counts in.
func ctrColumnWindow(col string) ttl.Window {
	var i int
	if _, err := fmt.Sscanf(col, "c%d", &i); err != nil || i >= len(ctrWindows) {
		panic("no counter model column " + col)
	}
	return ctrWindows[i]
}

// The counter model: DESIGN.md's "Counters that expire", without calling
// the library.
//
// The model stores, per column, the sum of each timestamp's increments.
// An Add at now counts in the window of its Window that holds now: its
// start is now, floored to the millisecond, less its remainder modulo
// Size; it is stamped with the window's expiry, start + Size + Keep, less
// the family's offset; it is refused (ErrExpired) when that expiry is not
// after now + the read margin, and the whole mutation with it. A cell is
// live while its expiry is after now + the margin. Read back, a cell's
// window starts at its expiry less Keep less Size, which must be a
// multiple of Size (ErrCounter). SumCounter sums the live windows whose
// start lies from n − 1 windows before the current one to the current
// one, and is refused (ErrInvalidOption) when n < 1 or Keep < (n − 1) ×
// Size + the margin. GC with a family's MaxAge(a) deletes the cells
// stamped before now − a.

// ctrCol is a column of a row.
type ctrCol struct{ row, fam, col string }

type ctrModel struct {
	margin     time.Duration
	writeTimes bool // each Set has its write-time companion
	now        time.Time
	cells      map[ctrCol]map[int64]int64  // counter cells: timestamp (µs) → sum
	plain      map[ctrCol]map[int64]string // the plain family's: timestamp → value
}

func newCtrModel(v ctrVariant, now time.Time) *ctrModel {
	return &ctrModel{margin: v.margin, writeTimes: v.writeTimes, now: now, cells: map[ctrCol]map[int64]int64{}, plain: map[ctrCol]map[int64]string{}}
}

// ctrStart is the start, in ms since the epoch, of the window of w that
// holds t.
func ctrStart(w ttl.Window, t time.Time) int64 {
	ms, size := floorMs(t), w.Size.Milliseconds()
	return ms - ms%size
}

// ctrWindowErr is the error of a Window a counter cannot count in.
func ctrWindowErr(w ttl.Window) error {
	const day = 24 * time.Hour
	if w.Size <= 0 || w.Size%time.Millisecond != 0 || w.Size < day && day%w.Size != 0 || w.Size > day && w.Size%day != 0 ||
		w.Keep < 0 || w.Keep%time.Millisecond != 0 {
		return ttl.ErrLifetime
	}
	return nil
}

// ctrExpiry is the expiry of a cell of family f stamped ts.
func ctrExpiry(f ctrFamily, ts int64) time.Time { return time.UnixMilli(ts / 1000).Add(f.offset).UTC() }

func (m *ctrModel) live(f ctrFamily, ts int64, now time.Time) bool {
	return ctrExpiry(f, ts).After(now.Add(m.margin))
}

// ctrInc is an increment of the cell of c stamped ts or, when set, a
// plain cell of value written there.
type ctrInc struct {
	c     ctrCol
	ts    int64
	delta int64
	set   bool
	value string
}

// build returns the increments of mut applied to row at now, or the
// errors that refuse it (any one of them may be reported).
func (m *ctrModel) build(row string, mut *ctrMut, now time.Time) ([]ctrInc, []error) {
	var incs []ctrInc
	var errs []error
	for _, a := range mut.adds {
		f := ctrFamilyNamed(a.fam)
		if a.set { // a Set: OneSecond's rule in TestModel's model
			ts, err := timeStamp(0, lifeSpec{kind: lkFor, d: a.life}, now, m.margin)
			if f.counter {
				errs = append(errs, ttl.ErrCounter)
			}
			if err != nil {
				errs = append(errs, err)
			}
			incs = append(incs, ctrInc{c: ctrCol{row, a.fam, a.col}, ts: ts, set: true, value: a.value})
			if m.writeTimes { // its companion: the write time, in µs
				wt := binary.BigEndian.AppendUint64(nil, uint64(now.UnixMicro()))
				incs = append(incs, ctrInc{c: ctrCol{row, a.fam, ttl.WriteTimePrefix + a.col}, ts: ts, set: true, value: string(wt)})
			}
			continue
		}
		if !f.counter {
			errs = append(errs, ttl.ErrCounter)
			if err := ctrWindowErr(a.w); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		if err := ctrWindowErr(a.w); err != nil {
			errs = append(errs, err)
			continue
		}
		start := ctrStart(a.w, now)
		if expiry := time.UnixMilli(start).Add(a.w.Size + a.w.Keep); !expiry.After(now.Add(m.margin)) {
			errs = append(errs, ttl.ErrExpired)
			continue
		}
		ts := (start + (a.w.Size + a.w.Keep - f.offset).Milliseconds()) * 1000
		incs = append(incs, ctrInc{c: ctrCol{row, a.fam, a.col}, ts: ts, delta: a.delta})
	}
	return incs, errs
}

func (m *ctrModel) add(incs []ctrInc) {
	for _, in := range incs {
		if in.set { // a second write at one timestamp replaces the first
			if m.plain[in.c] == nil {
				m.plain[in.c] = map[int64]string{}
			}
			m.plain[in.c][in.ts] = in.value
			continue
		}
		if m.cells[in.c] == nil {
			m.cells[in.c] = map[int64]int64{}
		}
		m.cells[in.c][in.ts] += in.delta
	}
}

// apply applies mut to row at now, all or nothing.
func (m *ctrModel) apply(row string, mut *ctrMut, now time.Time) []error {
	incs, errs := m.build(row, mut, now)
	if len(errs) == 0 {
		m.add(incs)
	}
	return errs
}

// applyCond applies NewCondMutation(nil, yes, no) to row at now: both
// branches must be valid; the predicate matches when the row holds a live
// cell.
func (m *ctrModel) applyCond(row string, yes, no *ctrMut, now time.Time) (bool, []error) {
	var branches [2][]ctrInc
	var errs []error
	for i, b := range [2]*ctrMut{yes, no} {
		if b != nil {
			incs, e := m.build(row, b, now)
			branches[i], errs = incs, append(errs, e...)
		}
	}
	if len(errs) > 0 {
		return false, errs
	}
	matched := m.anyLive(row, now)
	if matched {
		m.add(branches[0])
	} else {
		m.add(branches[1])
	}
	return matched, nil
}

func (m *ctrModel) anyLive(row string, now time.Time) bool {
	for _, c := range m.columns(storedColumns) {
		for ts := range m.cells[c] {
			if c.row == row && m.live(ctrFamilyNamed(c.fam), ts, now) {
				return true
			}
		}
		for ts := range m.plain[c] {
			if c.row == row && m.live(ctrFamilyNamed(c.fam), ts, now) {
				return true
			}
		}
	}
	return false
}

// stamps returns the timestamps of c's cells, newest first.
func (m *ctrModel) stamps(c ctrCol) []int64 {
	var out []int64
	for ts := range m.cells[c] {
		out = append(out, ts)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] > out[j] })
	return out
}

// readErrs are the errors that refuse a counter read of c with w.
func ctrReadErrs(c ctrCol, w ttl.Window) []error {
	var errs []error
	if !ctrFamilyNamed(c.fam).counter {
		errs = append(errs, ttl.ErrCounter)
	}
	if err := ctrWindowErr(w); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// readCounter is ReadCounter at now: c's live windows, newest first.
func (m *ctrModel) readCounter(c ctrCol, w ttl.Window, now time.Time) ([]ttl.WindowCount, []error) {
	if errs := ctrReadErrs(c, w); len(errs) > 0 {
		return nil, errs
	}
	f := ctrFamilyNamed(c.fam)
	var out []ttl.WindowCount
	for _, ts := range m.stamps(c) {
		if !m.live(f, ts, now) {
			continue
		}
		start := ctrExpiry(f, ts).Add(-w.Keep - w.Size)
		if start.UnixMilli()%w.Size.Milliseconds() != 0 {
			return nil, []error{ttl.ErrCounter}
		}
		out = append(out, ttl.WindowCount{Start: start, End: start.Add(w.Size), Expires: start.Add(w.Size + w.Keep), Sum: m.cells[c][ts]})
	}
	return out, nil
}

// sumCounter is SumCounter at now, and a broken promise: a window of the
// span stored but not live.
func (m *ctrModel) sumCounter(c ctrCol, w ttl.Window, n int, now time.Time) (int64, []error, string) {
	errs := ctrReadErrs(c, w)
	if len(errs) == 0 && (n < 1 || w.Keep < time.Duration(n-1)*w.Size+m.margin) {
		errs = append(errs, ttl.ErrInvalidOption)
	}
	if len(errs) > 0 {
		return 0, errs, ""
	}
	f := ctrFamilyNamed(c.fam)
	current := ctrStart(w, now)
	oldest := current - int64(n-1)*w.Size.Milliseconds()
	var sum int64
	for _, ts := range m.stamps(c) {
		start := ctrExpiry(f, ts).Add(-w.Keep - w.Size).UnixMilli()
		if start < oldest || start > current {
			continue
		}
		aligned := start%w.Size.Milliseconds() == 0
		if !m.live(f, ts, now) {
			if aligned {
				return 0, nil, fmt.Sprintf("the window from %v is in the span of SumCounter(%v, %d) at %v, stored and hidden",
					time.UnixMilli(start).UTC().Format(time.RFC3339Nano), w, n, now.Format(time.RFC3339Nano))
			}
			continue
		}
		if !aligned {
			return 0, []error{ttl.ErrCounter}, ""
		}
		sum += m.cells[c][ts]
	}
	return sum, nil, ""
}

// rowCells are the cells a read of row at now returns (no write-time
// companion), as ctrCellString prints them, sorted; or every stored cell
// of every row when row is "".
func (m *ctrModel) rowCells(row string, now time.Time) []string {
	var out []string
	for _, c := range m.columns(storedColumns) {
		if row != "" && c.row != row {
			continue
		}
		for ts, sum := range m.cells[c] {
			if row == "" || m.live(ctrFamilyNamed(c.fam), ts, now) {
				out = append(out, ctrCellString(c, ts, binary.BigEndian.AppendUint64(nil, uint64(sum))))
			}
		}
		for ts, v := range m.plain[c] {
			if row == "" || m.live(ctrFamilyNamed(c.fam), ts, now) && !strings.HasPrefix(c.col, ttl.WriteTimePrefix) {
				out = append(out, ctrCellString(c, ts, []byte(v)))
			}
		}
	}
	sort.Strings(out)
	return out
}

// ctrCellString prints a cell as the runner compares them: a counter's
// value as its sum, the plain family's as it is.
func ctrCellString(c ctrCol, ts int64, value []byte) string {
	if c.fam != "sess" && len(value) == 8 {
		return fmt.Sprintf("%s %s:%q@%d=%d", c.row, c.fam, c.col, ts, int64(binary.BigEndian.Uint64(value)))
	}
	return fmt.Sprintf("%s %s:%q@%d=%q", c.row, c.fam, c.col, ts, value)
}

// writeTime is the write time recorded beside the plain cell of c stamped
// ts, if any.
func (m *ctrModel) writeTime(c ctrCol, ts int64) (time.Time, bool) {
	v, ok := m.plain[ctrCol{c.row, c.fam, ttl.WriteTimePrefix + c.col}][ts]
	if !ok || len(v) != 8 {
		return time.Time{}, false
	}
	return time.UnixMicro(int64(binary.BigEndian.Uint64([]byte(v)))), true
}

// hidden counts c's stored cells that are not live at now.
func (m *ctrModel) hidden(c ctrCol, now time.Time) int {
	n := 0
	for ts := range m.cells[c] {
		if !m.live(ctrFamilyNamed(c.fam), ts, now) {
			n++
		}
	}
	return n
}

// storedColumns asks columns for every column with a cell, live or not.
const storedColumns = false

// columns returns the columns that hold cells (live ones, when live),
// sorted.
func (m *ctrModel) columns(live bool) []ctrCol {
	var out []ctrCol
	for c, cells := range m.cells {
		if len(cells) > 0 && (!live || m.hidden(c, m.now) < len(cells)) {
			out = append(out, c)
		}
	}
	for c, cells := range m.plain {
		for ts := range cells {
			if !live || m.live(ctrFamilyNamed(c.fam), ts, m.now) {
				out = append(out, c)
				break
			}
		}
	}
	slices.SortFunc(out, func(a, b ctrCol) int {
		return cmp.Or(strings.Compare(a.row, b.row), strings.Compare(a.fam, b.fam), strings.Compare(a.col, b.col))
	})
	return out
}

// gc deletes the cells GC may delete at now: those stamped before now
// less their family's GC age. It returns a live window it deleted, as
// "row family:column@timestamp", or "".
func (m *ctrModel) gc(now time.Time) string {
	var broken string
	for _, c := range m.columns(storedColumns) {
		f := ctrFamilyNamed(c.fam)
		for ts := range m.cells[c] {
			if ts >= now.UnixMicro()-f.gc.Microseconds() {
				continue
			}
			if ctrExpiry(f, ts).After(now) && broken == "" {
				broken = fmt.Sprintf("%s %s:%s@%d", c.row, c.fam, c.col, ts)
			}
			delete(m.cells[c], ts)
		}
		for ts := range m.plain[c] {
			if ts < now.UnixMicro()-f.gc.Microseconds() {
				delete(m.plain[c], ts)
			}
		}
		if len(m.cells[c]) == 0 {
			delete(m.cells, c)
		}
		if len(m.plain[c]) == 0 {
			delete(m.plain, c)
		}
	}
	return broken
}
