package model_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
)

// TestModelMoves checks Move, DESIGN.md's "Changing the strategy of a
// family that holds data", against the reference model of TestModel
// extended with the move's rules (model_moves_rules_test.go), written from
// DESIGN.md alone.
//
// For every supported pair of strategies, runs of random operations go
// through a table whose family "m" is in a Move, beside a OneSecond family
// and one without a strategy. Each run first writes, raw, the cells the
// old regime left (real timestamps, sequence numbers, or DefaultExpiration
// timestamps below the boundary), then interleaves: the framework's
// writes (Set, Replace, deletes, conditional mutations, ApplyBulk) with
// lifetimes either side may take, often aimed at the instants where the
// encoding changes; reads with and without the caller's filters, and
// ExpiresAt of every cell read; clock moves biased towards Start, the old
// rule's end, EndsBy and the cells' expiries; a second process, a second
// Table on the same raw table whose clock is offset by up to Skew, which
// decides by its own clock; raw writes of processes not yet configured,
// before Start; RewriteRow steps after Start, now and then with a write
// of the row between its read and the rewrite (refused with
// ErrInvalidOption between sequence numbers and times); and GC steps,
// which delete by hand what the library's GC policy, the move's or To's
// once no old cell is live for a reader lagging by Skew, lets Bigtable
// delete at the clock's instant. The policy must be DESIGN.md's, a GC step
// must leave every read as it was, and a rewrite what a reader sees
// (values and expiries); the model must predict every timestamp written
// (compared in the raw table after every non-framework step and every 16
// others), every refusal's sentinel, every read and every expiry.
//
// Not covered: read-modify-write, a read margin, write-time companions,
// StartMove's rewrite of misplaced cells (old cells of DefaultExpiration
// are written below the boundary), RewriteMove's checkpoints, and reads
// through To alone after the finish. In a move to sequence numbers To's
// policy is applied only once no old cell is stored: a GC step applies
// To's policy by hand, without FinishMove, which first deletes the old
// cells still stored (TestMoveFinishToSequenceNumbersLosesVersions in
// tests/moves/move_bugs_test.go, fixed); left there, expired old cells
// outrank every version, and MaxVersions would delete live ones.
//
// Each pair's operations are split in runs of 250 on fresh tables, each
// with its own Move: Old cycles through Default, For, Until and Forever,
// and Start, Skew, the defaults and Old's duration are drawn. The first
// process's clock starts at base (2030), far from the emulator's own GC.
//
// CELLTTL_MODEL_OPS sets the number of operations per pair (default 1000,
// 250 with -short), CELLTTL_MODEL_SEED the seed, as for TestModel.
func TestModelMoves(t *testing.T) {
	n, seed := modelSettings(t)
	const runLen = 250
	for i, p := range movePairs {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			e := emulator.StartForTest(t)
			st := newMoveStats()
			for run := 0; run*runLen < n; run++ {
				runSeed := seed + uint64(i)<<32 + uint64(run)
				v := moveVariant(rand.New(rand.NewPCG(runSeed, 0x30e)), p.from, p.to, run+int(seed%4))
				ops := generateMoves(v, runSeed, min(runLen, n-run*runLen))
				name := fmt.Sprintf("run%d", run)
				idx, msg := runMoves(t, e, v, name, ops, st)
				if idx < 0 {
					continue
				}
				reportFailure(t, seed, ops, idx, msg, fmt.Sprintf("in run %d, %v, on %s, from clock %v", run, v.move, v.name, testkit.Base.Format(time.RFC3339)),
					func(replay string, ops []moveOp) (int, string) {
						return runMoves(t, e, v, fmt.Sprintf("run%d-%s", run, replay), ops, nil)
					})
				return
			}
			t.Logf("%s: %v", p.name, st)
			if n >= 1000 && (st.written < n/10 || st.refused < n/50 || st.reads < n/10 || st.matched == 0 || st.unmatched == 0 ||
				st.second < n/50 || st.gcWindow == 0 || st.rewriteSteps == 0) {
				t.Errorf("the runs exercised too little: %v", st)
			}
		})
	}
}

// movePairs are the moves DESIGN.md supports: from a family without a
// strategy to each strategy, from SequenceNumbers to the time strategies,
// from DefaultExpiration to OneSecond.
var movePairs = []struct {
	name     string
	from, to rule
}{
	{"nil→OneSecond", ruleNone, ruleOneSecond},
	{"nil→SequenceNumbers", ruleNone, ruleSequence},
	{"nil→DefaultExpiration", ruleNone, ruleDefault},
	{"SequenceNumbers→OneSecond", ruleSequence, ruleOneSecond},
	{"SequenceNumbers→DefaultExpiration", ruleSequence, ruleDefault},
	{"DefaultExpiration→OneSecond", ruleDefault, ruleOneSecond},
}

// moveVariant draws the table of a run of a pair: its Move (Old by the
// run's number k, so that consecutive runs take each in turn; the rest
// drawn) and whether the other families are
// declared.
func moveVariant(r *rand.Rand, from, to rule, k int) *variant {
	s := &moveSpec{
		from: from, to: to,
		fromD: testkit.Pick(r, modelDefault, 2500*time.Millisecond, 10*time.Minute),
		toD:   testkit.Pick(r, modelDefault, 2500*time.Millisecond, 10*time.Minute),
		start: testkit.Base.Add(testkit.Pick(r, time.Second, 45*time.Second, 10*time.Minute)),
		skew:  testkit.Pick(r, 0, time.Millisecond, 2*time.Second, time.Minute),
	}
	switch []lifeKind{lkDefault, lkFor, lkUntil, lkForever}[k%4] {
	case lkFor:
		s.old = lifeSpec{kind: lkFor, d: testkit.Pick(r, 1500*time.Millisecond, 30*time.Second, modelDefault, 20*time.Minute)}
	case lkUntil:
		at := s.start.Add(testkit.Pick(r, 10*time.Second, 5*time.Minute, time.Hour) + testkit.Pick(r, 0, 300*time.Microsecond))
		if from == ruleSequence && r.IntN(3) == 0 {
			at = s.start.Add(-time.Minute) // sequence numbers may end before the start
		}
		s.old = lifeSpec{kind: lkUntil, t: at}
	case lkForever:
		s.old = lifeSpec{kind: lkForever}
	}
	declared := k%2 == 0
	name := "undeclared families"
	if declared {
		name = "declared families"
	}
	return &variant{name: name, families: map[string]rule{"m": ruleMove, "os": ruleOneSecond, "un": ruleNone}, declared: declared, move: s}
}
