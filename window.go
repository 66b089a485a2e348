package ttl

import (
	"fmt"
	"math"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/internal/rules"
)

// A Window is how a counter counts (see Counter and Mutation.Add): in
// fixed windows of Size, aligned to the Unix epoch, so that windows of a
// day start at midnight UTC and windows that divide a day fit in it. An
// increment counts toward the window that holds the table clock's now,
// and the window's cell lives Keep after the window closes: every
// increment for one window is stamped with one expiry, the window's end
// plus Keep, and Bigtable merges them into one cell.
// An invalid Size or Keep is refused with ErrLifetime (ErrOutOfRange
// when they overflow) where the window is used.
//
// Costs and rationale: docs/api-notes.md#ttlwindow.
type Window struct {
	Size time.Duration
	Keep time.Duration
}

// String returns the window as the Go expression that makes it, such as
// "Window{Size: 1m0s, Keep: 1h0m0s}".
func (w Window) String() string { return fmt.Sprintf("Window{Size: %v, Keep: %v}", w.Size, w.Keep) }

// check reports a window a counter cannot count in, wrapping ErrLifetime.
func (w Window) check() error {
	const day = 24 * time.Hour
	switch {
	case w.Size <= 0 || w.Size%time.Millisecond != 0:
		return fmt.Errorf("%w: %v: the size must be a positive whole number of milliseconds", ErrLifetime, w)
	case w.Size < day && day%w.Size != 0 || w.Size > day && w.Size%day != 0:
		return fmt.Errorf("%w: %v: the size must divide a day evenly, or be a whole number of days, so that windows fit in days", ErrLifetime, w)
	case w.Keep < 0 || w.Keep%time.Millisecond != 0:
		return fmt.Errorf("%w: %v: Keep must be a whole, non-negative number of milliseconds", ErrLifetime, w)
	case w.Keep > math.MaxInt64-w.Size:
		return fmt.Errorf("%w: %v: Size plus Keep passes the longest time.Duration, 292 years", ErrOutOfRange, w)
	}
	return nil
}

// start returns the start of the window that holds t, for every t a
// time.Time holds: windows before 1970 and after Bigtable's last timestamp
// too, which stamp then refuses, when their expiry is out of range, with
// ErrOutOfRange. It floors: Go's % keeps the dividend's sign, so
// ms - ms%size put an instant before the epoch in the window after its
// own. It subtracts from t how far t is into its window, which is less
// than Size and so fits a Duration, worked out from how far t is into its
// day (windows fit in days): nothing overflows, however early or late t.
func (w Window) start(t time.Time) time.Time {
	const daySec = 24 * 60 * 60
	sec := t.Unix() // rounded down: t.Nanosecond() is never negative
	day := sec / daySec
	if sec%daySec < 0 {
		day--
	}
	into := time.Duration(sec-day*daySec)*time.Second + time.Duration(t.Nanosecond()) // into its day
	if days := int64(w.Size / (24 * time.Hour)); days == 0 {
		into %= w.Size
	} else if d := day % days; d < 0 {
		into += time.Duration(d+days) * 24 * time.Hour
	} else {
		into += time.Duration(d) * 24 * time.Hour
	}
	return t.Add(-into).Round(0).UTC()
}

// stamp returns the timestamp, under the time rule r, of the cell of the
// window that starts at start: its expiry, the window's end plus Keep,
// less the rule's offset. It reports an expiry outside Bigtable's range,
// or in Forever's last millisecond, with ErrOutOfRange.
func (w Window) stamp(r rules.Time, start time.Time) (bigtable.Timestamp, error) {
	expiry := start.Add(w.Size + w.Keep)
	ms, inRange := rules.FloorMillis(expiry)
	ms -= r.Offset.Milliseconds()
	if inRange != 0 || ms < 0 || bigtable.Timestamp(ms*1000) >= r.Forever() {
		return 0, fmt.Errorf("%w: %v: the window starting %v expires at %v, which needs a timestamp outside 1970 to the year 294,247",
			ErrOutOfRange, w, start.UTC().Format(time.RFC3339Nano), expiry.UTC().Format(time.RFC3339Nano))
	}
	return bigtable.Timestamp(ms * 1000), nil
}

// of returns the start of the window whose cell, under the time rule r,
// is stamped ts, and false when ts does not fall on one of w's windows.
func (w Window) of(r rules.Time, ts bigtable.Timestamp) (time.Time, bool) {
	expiry, ok := r.Expiry(ts)
	if !ok {
		return time.Time{}, false
	}
	start := expiry.Add(-w.Keep - w.Size).UTC()
	return start, start.UnixMilli()%w.Size.Milliseconds() == 0
}
