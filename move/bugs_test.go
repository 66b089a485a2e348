package move_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/testkit"
)

// Bugs TestModelMoves found in Move's Finish, each reduced to its
// smallest case: DESIGN.md's rule it broke, and what the library did.
// (Those of the strategy alone, its writes and reads through a
// ttl.Table, belong to package ttl.)

// TestMoveFinishToSequenceNumbersLosesVersions: "Finish: once no old cell
// is live for a reader whose clock lags by Skew, set To's policy", after
// which "the processes can then be configured with To alone". Moving real
// timestamps to SequenceNumbers(n), the old cells' rule may have ended
// (Old: For, Until) while they are still stored: the move's policy is no
// GC. Their real timestamps outrank every sequence number, so Finish's
// MaxVersions(n) lets GC delete live versions below them, and a Table
// configured with SequenceNumbers(n) alone returns the expired old cells
// as the newest versions. Fixed: Finish deletes the old cells still
// stored before it sets a version limit, and after the start a move to
// sequence numbers writes versions only.
func TestMoveFinishToSequenceNumbersLosesVersions(t *testing.T) {
	ctx := context.Background()
	x := newMoveTable(t, nil)
	m := ttl.Move{To: ttl.SequenceNumbers(1), Start: start, Old: ttl.For(time.Minute), Skew: time.Second}
	tbl, err := ttl.NewTable(x.raw, map[string]ttl.Strategy{"f": m}, ttl.WithClock(x.clock.Now))
	require.NoError(t, err)
	x.clock.Set(start.Add(time.Second)) // a process that has started writes a version
	require.NoError(t, tbl.Apply(ctx, "r", testkit.Set("f", "c", "v1", ttl.Version(1))))
	x.clock.Set(start.Add(-time.Millisecond)) // one whose clock lags by a second has not: a real timestamp
	require.NoError(t, tbl.Apply(ctx, "r", testkit.Set("f", "c", "lagging", ttl.Default)))

	_, err = x.family(x.raw, m, x.opts(2*time.Minute)).Finish(ctx)
	require.NoError(t, err, "no old cell is live a minute after the start")
	final, err := ttl.NewTable(x.raw, map[string]ttl.Strategy{"f": ttl.SequenceNumbers(1)}, ttl.WithClock(x.clock.Now))
	require.NoError(t, err)
	row, err := final.ReadRow(ctx, "r")
	require.NoError(t, err)
	assert.Equal(t, []string{"f:c=v1"}, testkit.Values(row), "the expired cell is no version; under MaxVersions(1) GC may delete v1 and keep it")
}

// TestMoveFinishToDefaultExpirationResurfaces: the same finish, moving real
// timestamps to DefaultExpiration(d) with Old: For(o), o shorter than d.
// An old cell hidden o after its write is, under DefaultExpiration(d)
// alone, live until d after it: once the processes are configured with To
// alone, as DESIGN.md says they can be, expired old cells come back until
// GC removes them. Fixed: Finish deletes the expired old cells that To
// alone would read as live.
func TestMoveFinishToDefaultExpirationResurfaces(t *testing.T) {
	ctx := context.Background()
	x := newMoveTable(t, nil)
	m := ttl.Move{To: ttl.DefaultExpiration(time.Hour), Start: start, Old: ttl.For(time.Minute)}
	x.put("r", "c", "old", testkit.MS(start.Add(-time.Second)))
	_, err := x.family(x.raw, m, x.opts(2*time.Minute)).Finish(ctx)
	require.NoError(t, err, "the old cell expired a minute after its write")
	final, err := ttl.NewTable(x.raw, map[string]ttl.Strategy{"f": m.To}, ttl.WithClock(x.clock.Now))
	require.NoError(t, err)
	row, err := final.ReadRow(ctx, "r")
	require.NoError(t, err)
	assert.Empty(t, testkit.Values(row), "the old cell expired")
}
