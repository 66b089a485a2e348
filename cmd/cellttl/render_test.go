package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/audit"
	"github.com/cellttl/ttl/internal/text"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/scan"
)

// The renderers are tested on reports made by hand, for the states a real
// run reaches only by timing (a scan cut short, a change allowed but not
// reached); the tests that run the command check the common ones.

var renderNow = time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)

// TestBucketLabels names every bucket of an audit's histograms by its
// edges, as the audit makes them.
func TestBucketLabels(t *testing.T) {
	a, err := audit.NewReport("t", renderNow, map[string]ttl.Strategy{"f": ttl.OneSecond()}, nil, false)
	require.NoError(t, err)
	var labels []string
	for _, b := range a.Families[0].Expiring {
		labels = append(labels, bucketLabel(renderNow, b))
	}
	assert.Equal(t, []string{
		"more than 30d ago", "7d to 30d ago", "1d to 7d ago", "1h to 1d ago", "less than 1h ago",
		"within 1h", "in 1h to 1d", "in 1d to 7d", "in 7d to 30d", "in 30d to 1y", "in more than 1y",
	}, labels)
	assert.Equal(t, "1h30m0s", formatSpan(90*time.Minute))
}

// TestPlanStates prints the first line of a plan in each state it can be
// in, and each family's action.
func TestPlanStates(t *testing.T) {
	change := policy.FamilyPlan{Status: policy.Status{Family: "f", Strategy: "OneSecond()", Found: bigtable.NoGcPolicy(), Want: bigtable.MaxAgePolicy(time.Second), Exists: true}, Action: policy.Change}
	keep := policy.FamilyPlan{Status: policy.Status{Family: "k", Found: bigtable.MaxAgePolicy(time.Second), Want: bigtable.MaxAgePolicy(time.Second), Exists: true, Matches: true}, Action: policy.Keep}
	with := func(f policy.FamilyPlan, edit func(*policy.FamilyPlan)) policy.FamilyPlan { edit(&f); return f }
	for _, tt := range []struct {
		name   string
		plan   policy.Plan
		state  string
		action string
	}{
		{"stopped", policy.Plan{Families: []policy.FamilyPlan{change}, Read: scan.Stats{Shards: 5, ShardsRead: 2}},
			"the scan stopped after 2 of 5 shards: nothing decided, nothing changed; the counts below are partial", "undecided"},
		{"estimate", policy.Plan{Families: []policy.FamilyPlan{change}, Read: scan.Stats{Shards: 5, Sampled: 2, ShardsRead: 2}},
			"estimate from a sample of 2 ranges of 5 shards, nothing decided, nothing changed; would make 1 change", "would change (estimate)"},
		{"refused in a dry run", policy.Plan{DryRun: true, Families: []policy.FamilyPlan{with(change, func(f *policy.FamilyPlan) { f.Refused, f.Rows = true, 3 })}},
			"dry run, nothing changed; 1 change would be refused", "refused"},
		{"refused", policy.Plan{Families: []policy.FamilyPlan{with(change, func(f *policy.FamilyPlan) { f.Refused, f.Rows = true, 3 })}},
			"1 change refused, nothing changed", "refused"},
		{"dry run", policy.Plan{DryRun: true, Families: []policy.FamilyPlan{with(change, func(f *policy.FamilyPlan) { f.Rows = 3 })}},
			"dry run, nothing changed; would make 1 change", "would change, loses data"},
		{"nothing to do", policy.Plan{Families: []policy.FamilyPlan{keep}}, "every family matches its strategy, nothing to change", "keep"},
		{"stopped part way", policy.Plan{Families: []policy.FamilyPlan{with(change, func(f *policy.FamilyPlan) { f.Rows = 3 })}},
			"0 changes made, 1 not made", "not changed"},
		{"changed, data lost", policy.Plan{Families: []policy.FamilyPlan{with(change, func(f *policy.FamilyPlan) { f.Done, f.Rows = true, 3 })}},
			"1 change made", "changed, data lost"},
		{"created with the table", policy.Plan{CreateTable: true, Families: []policy.FamilyPlan{with(change, func(f *policy.FamilyPlan) { f.Action, f.Done, f.Exists = policy.Create, true, false })}},
			"table does not exist, created with its families; 1 change made", "created"},
		{"table to create", policy.Plan{CreateTable: true, DryRun: true, Families: []policy.FamilyPlan{with(change, func(f *policy.FamilyPlan) { f.Action, f.Exists = policy.Create, false })}},
			"table does not exist, would be created with its families; dry run, nothing changed; would make 1 change", "would create"},
	} {
		assert.Equal(t, tt.state, planState(&tt.plan), tt.name)
		assert.Equal(t, tt.action, planAction(&tt.plan, tt.plan.Families[0]), tt.name)
	}
	var b bytes.Buffer
	p := policy.Plan{Table: "t", Now: renderNow, Families: []policy.FamilyPlan{with(change, func(f *policy.FamilyPlan) {
		f.Rows, f.Resurfaced, f.Losses = 3, 2, []policy.Loss{{Kind: policy.LossExpired, Rows: 3, Until: renderNow, Expiries: true}}
	})}, Read: scan.Stats{Shards: 4, ShardsRead: 3, Reads: 3}}
	renderPlan(&b, &p)
	assert.Contains(t, b.String(), "  f: ≥3 rows hold cells stamped up to "+text.Time(renderNow)+", which OneSecond() reads as expiries already past: hidden at once, deleted by GC within seconds\n")
	assert.Contains(t, b.String(), "f       OneSecond()  never  maxage=1s  undecided  ≥3\n", "the policies as cbt spells them")
	assert.Contains(t, b.String(), "  f: ≥2 rows hold cells that the current policy never already lets GC delete")
	assert.Contains(t, b.String(), "  scan: 3 of 4 shards read (partial), 3 reads")
}

// TestLossReason says each kind of loss in full, from its data and its
// family's strategy and wanted policy, as ensure prints it: the sentences
// the command printed when the library wrote them.
func TestLossReason(t *testing.T) {
	h := time.Hour
	tm := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		require.NoError(t, err)
		return v
	}
	family := func(s ttl.Strategy) policy.FamilyPlan {
		return policy.FamilyPlan{Status: policy.Status{Family: "f", Strategy: s.String(), Want: s.GCPolicy()}}
	}
	for _, tt := range []struct {
		s    ttl.Strategy
		loss policy.Loss
		want string
	}{
		{ttl.OneSecond(), policy.Loss{Kind: policy.LossExpired, Rows: 3, Until: tm("2030-04-30T09:00:00Z"), Expiries: true},
			"3 rows hold cells stamped up to 2030-04-30T09:00:00.000Z, which OneSecond() reads as expiries already past: hidden at once, deleted by GC within seconds"},
		{ttl.OneSecond(), policy.Loss{Kind: policy.LossSequence, Rows: 2},
			"2 rows hold sequence numbers (timestamps before 2000), which the age-based policy maxage=1s deletes all at once"},
		{ttl.DefaultExpiration(48 * h), policy.Loss{Kind: policy.LossSequence, Rows: 1},
			"1 row holds sequence numbers (timestamps before 2000), which the age-based policy maxage=2d deletes all at once"},
		{ttl.SequenceNumbers(3), policy.Loss{Kind: policy.LossRealTime, Rows: 1},
			"1 row holds real-time timestamps (2000 or later), which outrank every sequence number: reads would return them, and GC under maxversions=3 would delete the versions written after them"},
		{ttl.SequenceNumbers(3), policy.Loss{Kind: policy.LossVersions, Rows: 2, Versions: 3},
			"2 rows have columns with more than 3 versions, whose oldest maxversions=3 deletes"},
		{ttl.DefaultExpiration(48 * h), policy.Loss{Kind: policy.LossExpired, Rows: 2, From: tm("2030-04-27T09:00:00.001Z"), Until: tm("2030-04-28T09:00:00Z"), Age: 72 * h},
			"2 rows hold cells stamped 2030-04-27T09:00:00.001Z to 2030-04-28T09:00:00.000Z, which DefaultExpiration(48h0m0s) reads as expired and maxage=3d keeps stored: GC deletes them at once; written under maxage=3d as a default, they are live cells, hidden at once; kept by a grace, they are lost to a sweep that has not read them"},
		{ttl.DefaultExpiration(48 * h), policy.Loss{Kind: policy.LossEarlier, Rows: 1, Age: 72 * h, Shift: 24 * h},
			"1 row holds live cells whose expiries move 1d earlier under DefaultExpiration(48h0m0s), written under maxage=3d as a default (kept by a grace on a default of 2d, none moves)"},
		{ttl.OneSecond(), policy.Loss{Kind: policy.LossExpired, Rows: 1, From: tm("2030-04-28T09:00:00.001Z"), Until: tm("2030-04-30T09:00:00Z"), Age: 48 * h, Expiries: true},
			"1 row holds cells stamped 2030-04-28T09:00:00.001Z to 2030-04-30T09:00:00.000Z, which OneSecond() reads as expired and maxage=2d keeps stored: GC deletes them at once; written under maxage=2d as a default, they are live cells, hidden at once; kept by a grace, they are lost to a sweep that has not read them"},
		{ttl.OneSecond(), policy.Loss{Kind: policy.LossSooner, Rows: 1, Age: 48 * h, Shift: 48 * h},
			"1 row holds live cells whose expiries OneSecond() keeps: GC deletes each 2d sooner once expired (maxage=2d, a grace, taken off)"},
		{ttl.Grace(ttl.DefaultExpiration(48*h), 2*h), policy.Loss{Kind: policy.LossEarlier, Rows: 1, Age: 49 * h, Shift: h},
			"1 row holds live cells whose expiries move 1h earlier under Grace(DefaultExpiration(48h0m0s), 2h0m0s), written under maxage=49h as a default (kept by a grace on a default of 2d, none moves)"},
		{ttl.DefaultExpiration(48 * h), policy.Loss{Kind: policy.LossExpired, Rows: 1, Until: tm("2030-04-28T09:00:00Z")},
			"1 row holds cells stamped up to 2030-04-28T09:00:00.000Z, which would expire at once under DefaultExpiration(48h0m0s)"},
		{ttl.Grace(ttl.OneSecond(), h), policy.Loss{Kind: policy.LossEntries, Rows: 2, From: tm("2030-04-29T09:00:00.001Z"), Until: tm("2030-04-30T08:00:00Z")},
			"2 entries stamped 2030-04-29T09:00:00.001Z to 2030-04-30T08:00:00.000Z (each at the end of the second its cells expired in), which maxage=1h deletes at once: a sweep behind by more than that would no longer find their rows"},
		{ttl.OneSecond(), policy.Loss{Kind: policy.LossKind(99), Rows: 1}, "1 row holds cells of LossKind(99)"},
	} {
		assert.Equal(t, tt.want, lossReason(family(tt.s), tt.loss), "%v", tt.loss.Kind)
	}
}

// TestProgressLine prints progress as a log reads it (a plain line per
// interval, the last one at the end) and as a terminal shows it (one line
// rewritten in place).
func TestProgressLine(t *testing.T) {
	var log bytes.Buffer
	p := newProgress(&config{progress: true}, &log)
	require.NotNil(t, p)
	assert.False(t, p.terminal, "a buffer is no terminal")
	o := p.options(&config{workers: 3, sample: 0.5})
	assert.Equal(t, 3, o.Workers)
	assert.Equal(t, 0.5, o.Sample)
	assert.Zero(t, o.ProgressEvery, "the engine's default interval; the line prints every 10s")
	pr := scan.Progress{Shards: 4, ShardsDone: 1, Rows: 10, RowsSeen: 100, Elapsed: time.Second}
	p.report(pr)
	assert.Empty(t, log.String(), "within the first interval nothing is printed")
	p.printed = p.printed.Add(-time.Minute)
	p.report(pr)
	pr.ShardsDone = 2
	p.report(pr)
	p.end()
	assert.Equal(t, "progress: "+scan.Progress{Shards: 4, ShardsDone: 1, Rows: 10, RowsSeen: 100, Elapsed: time.Second}.String()+"\n"+
		"progress: "+pr.String()+"\n", log.String(), "a line per interval, then the last one")

	var term bytes.Buffer
	tp := &progressLine{w: &term, terminal: true}
	assert.Equal(t, 200*time.Millisecond, tp.options(&config{}).ProgressEvery)
	tp.report(pr)
	tp.end()
	assert.Equal(t, "\r\033[K"+pr.String()+"\n", term.String())

	assert.Nil(t, newProgress(&config{}, &log), "-progress off")
	var off *progressLine
	assert.Equal(t, scan.Options{Workers: 2}, off.options(&config{workers: 2}))
	off.end()
}

// TestFlagValues prints the flag values as -h shows their defaults.
func TestFlagValues(t *testing.T) {
	var f formatFlag
	assert.Equal(t, "text", f.String())
	require.Error(t, f.Set("yaml"))
	require.NoError(t, f.Set("json"))
	assert.Equal(t, "json", f.String())
	var l listFlag
	assert.Equal(t, "", (*listFlag)(nil).String())
	require.NoError(t, l.Set("a"))
	require.NoError(t, l.Set("b"))
	assert.Equal(t, "a,b", l.String())
	var tf timeFlag
	assert.Equal(t, "", tf.String())
	require.NoError(t, tf.Set("2030-04-30T09:00:00Z"))
	assert.Equal(t, "2030-04-30T09:00:00Z", tf.String())
	var from fromFlag
	assert.Equal(t, "", from.String())
	require.NoError(t, from.Set("none"))
	assert.Equal(t, "none", from.String())
	require.NoError(t, from.Set("default:48h"))
	assert.Equal(t, "DefaultExpiration(48h0m0s)", from.String())
	require.Error(t, from.Set("weekly"))
	var old oldFlag
	assert.Equal(t, "default", old.String())
	require.NoError(t, old.Set("for:30m"))
	assert.Equal(t, "for:30m", old.String())
	assert.Equal(t, "2d3h0m0s", formatDuration(51*time.Hour))
	assert.Equal(t, "2d", formatDuration(48*time.Hour))
	assert.Equal(t, "59.5s", formatDuration(59500*time.Millisecond))
}

// TestRenderAuditPartial prints an audit whose scan stopped: every count
// a lower bound.
func TestRenderAuditPartial(t *testing.T) {
	a, err := audit.NewReport("t", renderNow, map[string]ttl.Strategy{"f": ttl.OneSecond()}, map[string]bigtable.GCPolicy{"f": bigtable.MaxAgePolicy(time.Second)}, true)
	require.NoError(t, err)
	a.Families[0].Live = scan.Count{Cells: 2, Bytes: 40}
	a.Read = scan.Stats{Shards: 4, ShardsRead: 1, Reads: 1}
	var b bytes.Buffer
	renderAudit(&b, a)
	out := b.String()
	assert.True(t, strings.HasPrefix(out, `table "t" at 2030-04-30T09:00:00.000Z: the scan stopped after 1 of 4 shards: the counts below are partial; bytes with values`), out)
	assert.Contains(t, out, "≥2 cells (40 B)")
}
