package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	btpb "cloud.google.com/go/bigtable/apiv2/bigtablepb"
	"cloud.google.com/go/bigtable/bttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	"github.com/cellttl/ttl/internal/emulator"
)

// A watchedServer is the emulator behind an interceptor of the data API's
// streams, which records what the commands ask of it and shapes its
// answers: the table's tablets, and how long a read takes.
type watchedServer struct {
	e   *emulator.Emulator
	raw *bigtable.Table

	// splits are the row keys SampleRowKeys answers, the table's tablet
	// boundaries, instead of the emulator's random ones.
	splits []string
	// hold is how long each ReadRows waits before it reads, so that the
	// shards read at once overlap.
	hold time.Duration
	// stall makes a ReadRows of the rows from this key wait until its
	// caller gives up; stalled, if not nil, is sent to when one starts
	// waiting.
	stall   string
	stalled chan struct{}

	mu        sync.Mutex
	profiles  map[string]int // app profile → data requests made with it
	reads     int            // ReadRows requests
	active    int            // ReadRows open now
	maxActive int            // the most ReadRows open at once
}

// startWatched starts a watched emulator, points BIGTABLE_EMULATOR_HOST at
// it, creates table t with the families (nil: no GC) and splits it at
// r2, r4, r6 and r8: five shards.
func startWatched(t *testing.T, families map[string]bigtable.GCPolicy) *watchedServer {
	t.Helper()
	w := &watchedServer{splits: []string{"r2", "r4", "r6", "r8"}, profiles: map[string]int{}}
	srv, err := bttest.NewServer("localhost:0", grpc.StreamInterceptor(w.intercept))
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	t.Setenv("BIGTABLE_EMULATOR_HOST", srv.Addr)
	w.e = emulator.ConnectForTest(t, srv.Addr)
	w.raw, err = w.e.CreateTable(context.Background(), "t", families)
	require.NoError(t, err)
	return w
}

func (w *watchedServer) intercept(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	switch info.FullMethod {
	case "/google.bigtable.v2.Bigtable/SampleRowKeys":
		req := new(btpb.SampleRowKeysRequest)
		if err := ss.RecvMsg(req); err != nil {
			return err
		}
		w.mu.Lock()
		w.profiles[req.AppProfileId]++
		w.mu.Unlock()
		for _, k := range append(w.splits, "") {
			if err := ss.SendMsg(&btpb.SampleRowKeysResponse{RowKey: []byte(k)}); err != nil {
				return err
			}
		}
		return nil
	case "/google.bigtable.v2.Bigtable/ReadRows":
		w.mu.Lock()
		w.reads++
		w.active++
		w.maxActive = max(w.maxActive, w.active)
		w.mu.Unlock()
		defer func() {
			w.mu.Lock()
			w.active--
			w.mu.Unlock()
		}()
		return handler(srv, &watchedRead{ss, w})
	}
	return handler(srv, ss)
}

// watchedRead is a ReadRows stream: receiving its request records its app
// profile, then holds or stalls it.
type watchedRead struct {
	grpc.ServerStream
	w *watchedServer
}

func (r *watchedRead) RecvMsg(m any) error {
	if err := r.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	req, ok := m.(*btpb.ReadRowsRequest)
	if !ok {
		return nil
	}
	r.w.mu.Lock()
	r.w.profiles[req.AppProfileId]++
	r.w.mu.Unlock()
	ctx := r.Context()
	select {
	case <-time.After(r.w.hold):
	case <-ctx.Done():
		return status.FromContextError(ctx.Err()).Err()
	}
	if ranges := req.GetRows().GetRowRanges(); r.w.stall != "" && len(ranges) > 0 && string(ranges[0].GetStartKeyClosed()) == r.w.stall {
		if r.w.stalled != nil {
			r.w.stalled <- struct{}{}
		}
		<-ctx.Done()
		return status.FromContextError(ctx.Err()).Err()
	}
	return nil
}

// seen returns the app profiles of the data requests so far, and forgets
// them, with the most ReadRows open at once.
func (w *watchedServer) seen() (profiles map[string]int, maxActive int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	profiles, maxActive = w.profiles, w.maxActive
	w.profiles, w.maxActive = map[string]int{}, 0
	return profiles, maxActive
}

// seed fills table t, in ten rows r0…r9, two to a shard: in sess
// (onesecond) a token expiring in an hour in r0…r5 and one expired an
// hour ago in r6…r9; in clicks (default:48h) a count written an hour ago
// in every row; in meta (no strategy) a source in r0.
func (w *watchedServer) seed(t *testing.T, now time.Time) {
	t.Helper()
	for i := 0; i < 10; i++ {
		row := fmt.Sprintf("r%d", i)
		expiry := now.Add(time.Hour)
		if i >= 6 {
			expiry = now.Add(-time.Hour)
		}
		put(t, w.raw, row, "sess", "token", expiry)
		put(t, w.raw, row, "clicks", "n", now.Add(-time.Hour))
	}
	put(t, w.raw, "r0", "meta", "src", now.Add(-24*time.Hour))
}

var seeded = map[string]bigtable.GCPolicy{"sess": nil, "clicks": nil, "meta": nil}

// statsArgs audits the seeded table with its strategies.
func statsArgs(extra ...string) []string {
	return append(with("stats", "-family", "sess=onesecond", "-family", "clicks=default:48h"), extra...)
}

// ensureArgs plans the seeded table's strategies: clicks changes freely,
// sess would hide the four rows whose tokens have expired.
func ensureArgs(extra ...string) []string {
	return append(with("ensure", "-family", "sess=onesecond", "-family", "clicks=default:48h"), extra...)
}

// readJSON is the part of a report's "read" (scan.Stats) the tests read.
type readJSON struct {
	Reads, Shards, Sampled int
	ShardsRead             int `json:"shards_read"`
	CellsSeen              int `json:"cells_seen"`
	Complete, Estimate     bool
}

// auditJSON is the part of stats -format json the tests read.
type auditJSON struct {
	Families []struct {
		Family, Strategy, Policy              string
		Live, Expired, Forever, Uncollectable struct{ Cells, Bytes int64 }
	}
	Read readJSON
}

// decodeAudit decodes stats -format json: the whole of stdout.
func decodeAudit(t *testing.T, stdout string) auditJSON {
	t.Helper()
	var a auditJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &a), stdout)
	require.Len(t, a.Families, 3)
	return a
}

// planJSON is the part of ensure -format json the tests read.
type planJSON struct {
	DryRun   bool `json:"dry_run"`
	Families []struct {
		Family, Found, Want, Action string
		RowsLost                    int `json:"rows_lost"`
		Refused, Done               bool
	}
	Read readJSON
}

func decodePlan(t *testing.T, stdout string) planJSON {
	t.Helper()
	var p planJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &p), stdout)
	require.Len(t, p.Families, 2)
	return p
}

// TestStats audits the seeded table: its counts, as text and as JSON.
func TestStats(t *testing.T) {
	w := startWatched(t, seeded)
	w.seed(t, time.Now())

	stdout, stderr, code := cellttl(statsArgs()...)
	require.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stderr, "no progress line for a scan this short")
	assert.Regexp(t, `^table "t" at \S+: every shard read; bytes without values \(stripped on the server\)\n`, stdout)
	assert.Contains(t, stdout, `
FAMILY  STRATEGY                    POLICY  LIVE              EXPIRED, STORED  NEVER EXPIRE   UNCOLLECTABLE
clicks  DefaultExpiration(48h0m0s)  never   10 cells (180 B)  0                0              0
meta    -                           never   1 cell (18 B)     0                1 cell (18 B)  0
sess    OneSecond()                 never   6 cells (120 B)   4 cells (80 B)   0              4 cells (80 B)
  clicks: live cells expire in 1d to 7d: 10 cells (180 B)
  sess: live cells expire within 1h: 6 cells (120 B)
  scan: 5 shards, 5 reads, 10 rows and 21 cells seen, 21 cells returned
`)

	stdout, stderr, code = cellttl(statsArgs("-format", "json")...)
	require.Equal(t, exitOK, code, stderr)
	a := decodeAudit(t, stdout)
	assert.True(t, a.Read.Complete)
	assert.False(t, a.Read.Estimate)
	clicks, meta, sess := a.Families[0], a.Families[1], a.Families[2]
	assert.Equal(t, []string{"clicks", "meta", "sess"}, []string{clicks.Family, meta.Family, sess.Family})
	assert.Equal(t, "OneSecond()", sess.Strategy)
	assert.Equal(t, int64(6), sess.Live.Cells)
	assert.Equal(t, int64(4), sess.Expired.Cells)
	assert.Equal(t, int64(4), sess.Uncollectable.Cells, "no GC policy deletes them")
	assert.Equal(t, int64(10), clicks.Live.Cells)
	assert.Equal(t, int64(0), clicks.Expired.Cells)
	assert.Equal(t, int64(1), meta.Forever.Cells)
	assert.Equal(t, int64(180), clicks.Live.Bytes)
	assert.Equal(t, 5, a.Read.Shards)
	assert.Equal(t, 5, a.Read.ShardsRead)
	assert.Equal(t, 21, a.Read.CellsSeen)
}

// TestJSONOutput checks check's and ensure's -format json: the whole of
// stdout is one JSON document, with the exit statuses of the text.
func TestJSONOutput(t *testing.T) {
	w := startWatched(t, seeded)
	w.seed(t, time.Now())
	setPolicy(t, w.e.Admin, "clicks", bigtable.MaxAgePolicy(48*time.Hour))

	stdout, stderr, code := cellttl(with("check", "-family", "clicks=default:2d", "-family", "sess=onesecond", "-family", "gone=seqnum:1", "-format", "json")...)
	assert.Equal(t, exitMismatch, code)
	assert.Contains(t, stderr, `cellttl check: table "t" has no family "gone"`)
	assert.Contains(t, stderr, `cellttl check: table "t": family "sess" (OneSecond()): found never, want maxage=1s`)
	type status struct {
		Family, Strategy, Found, Want string
		Exists, Matches               bool
	}
	var check struct {
		Table    string
		Families []status
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &check), stdout)
	assert.Equal(t, "t", check.Table)
	require.Len(t, check.Families, 3)
	assert.Equal(t, status{"clicks", "DefaultExpiration(48h0m0s)", "maxage=2d", "maxage=2d", true, true}, check.Families[0])
	assert.Equal(t, status{"gone", "SequenceNumbers(1)", "missing", "maxversions=1", false, false}, check.Families[1])
	assert.Equal(t, status{"sess", "OneSecond()", "never", "maxage=1s", true, false}, check.Families[2])
	assert.NotContains(t, stdout, `"finished"`, "no family is in a move")

	// ensure refuses sess's change: the plan as JSON, exit 3.
	stdout, stderr, code = cellttl(ensureArgs("-format", "json")...)
	assert.Equal(t, exitMismatch, code)
	assert.Contains(t, stderr, "refused, nothing changed")
	p := decodePlan(t, stdout)
	assert.True(t, p.Read.Complete, "the scan decided")
	assert.True(t, p.DryRun)
	assert.Equal(t, "keep", p.Families[0].Action)
	assert.Equal(t, "change", p.Families[1].Action)
	assert.True(t, p.Families[1].Refused)
	assert.Equal(t, 4, p.Families[1].RowsLost, "the rows r6…r9 hold expired tokens")
	assert.Equal(t, 5, p.Read.ShardsRead)

	// A change made: JSON still, without the text's hints.
	stdout, stderr, code = cellttl(with("ensure", "-family", "clicks=default:30d", "-apply", "-format", "json")...)
	require.Equal(t, exitOK, code, stderr)
	var made struct {
		DryRun   bool `json:"dry_run"`
		Families []struct {
			Action string
			Done   bool
		}
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &made), stdout)
	assert.False(t, made.DryRun)
	assert.Equal(t, "change", made.Families[0].Action)
	assert.True(t, made.Families[0].Done)
	assert.Equal(t, "age() > 30d", policies(t, w.e.Admin)["clicks"])
}

// TestSample checks -sample: stats and ensure read a sample of ranges of
// the five shards (a request each) and label every count an estimate;
// ensure decides nothing. Which ranges a sample reads is random: the
// counts are checked for their labels, not their values.
func TestSample(t *testing.T) {
	w := startWatched(t, seeded)
	w.seed(t, time.Now())

	stdout, stderr, code := cellttl(statsArgs("-sample", "0.4")...)
	require.Equal(t, exitOK, code, stderr)
	m := regexp.MustCompile(`^table "t" at \S+: estimates from a sample of (\d+) ranges of 5 shards;`).FindStringSubmatch(stdout)
	require.NotNil(t, m, stdout)
	assert.Regexp(t, `\nsess +OneSecond\(\) +never +(0|~\d+ cells \(\d+ B\)) +(0|~\d+ cells)`, stdout, "counts labelled estimates")
	assert.Regexp(t, `\n  scan: a sample of `+m[1]+` ranges of 5 shards \(estimates: counts ×[\d.]+\), `+m[1]+` reads, `, stdout)
	w.mu.Lock()
	assert.Equal(t, m[1], strconv.Itoa(w.reads), "a request per range")
	w.mu.Unlock()

	stdout, stderr, code = cellttl(statsArgs("-sample", "0.4", "-format", "json")...)
	require.Equal(t, exitOK, code, stderr)
	a := decodeAudit(t, stdout)
	assert.True(t, a.Read.Estimate)
	assert.False(t, a.Read.Complete)
	assert.GreaterOrEqual(t, a.Read.Sampled, 5, "ranges of every shard")

	stdout, stderr, code = cellttl(ensureArgs("-sample", "0.4")...)
	require.Equal(t, exitOK, code, stderr)
	assert.Regexp(t, `^table "t" at \S+: estimate from a sample of \d+ ranges of 5 shards, nothing decided, nothing changed; would make 2 changes\n`, stdout)
	assert.Regexp(t, `  never  maxage=1s  would change(, loses data)? \(estimate\) +~\d+\n`, stdout)
	assert.Regexp(t, `  never  maxage=2d  would change \(estimate\) +~0\n`, stdout)
	assert.NotContains(t, stdout, "refused")
	assert.True(t, strings.HasSuffix(stdout, "estimate: run again without -sample to decide\n"), stdout)

	stdout, stderr, code = cellttl(ensureArgs("-sample", "0.4", "-format", "json")...)
	require.Equal(t, exitOK, code, stderr)
	p := decodePlan(t, stdout)
	assert.False(t, p.Read.Complete, "an estimate decides nothing")
	assert.True(t, p.Read.Estimate)
	assert.GreaterOrEqual(t, p.Read.Sampled, 5)
	assert.Equal(t, "change", p.Families[1].Action)
	assert.GreaterOrEqual(t, p.Families[1].RowsLost, 0)
	assert.False(t, p.Families[1].Refused, "an estimate refuses nothing")

	_, stderr, code = cellttl(ensureArgs("-sample", "0.4", "-apply")...)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "-sample gives estimates, which cannot decide a change")
	_, stderr, code = cellttl(statsArgs("-sample", "1")...)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "-sample 1: want a fraction")
	assert.Equal(t, map[string]string{"sess": "", "clicks": "", "meta": ""}, policies(t, w.e.Admin), "nothing changed")
}

// TestWorkers checks that -workers bounds the shards read at once: each
// read is held long enough for the workers' reads to overlap.
func TestWorkers(t *testing.T) {
	w := startWatched(t, seeded)
	w.seed(t, time.Now())
	w.hold = 150 * time.Millisecond
	for _, tt := range []struct {
		args    []string
		workers int
	}{
		{statsArgs("-workers", "1"), 1},
		{statsArgs("-workers", "3"), 3},
		{ensureArgs("-workers", "2"), 2},
		{statsArgs(), 5}, // the default, ttl.DefaultWorkers, is more than the shards
	} {
		w.seen()
		stdout, stderr, code := cellttl(tt.args...)
		assert.NotEqual(t, exitFailed, code, stderr)
		assert.Contains(t, stdout, "scan: 5 shards, 5 reads", tt.args)
		_, most := w.seen()
		assert.Equal(t, tt.workers, most, "%v: the most shards read at once", tt.args)
	}
	_, stderr, code := cellttl(statsArgs("-workers", "0")...)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "-workers 0: want 1 or more")
}

// TestAppProfile checks that every command that reads data sends its
// requests with -app-profile's profile, and with the instance's default
// (none named) without it. The emulator serves any profile alike; the
// requests it receives name it.
func TestAppProfile(t *testing.T) {
	w := startWatched(t, seeded)
	w.seed(t, time.Now())
	start := time.Now().Add(time.Hour).Truncate(time.Second).UTC().Format(time.RFC3339)
	for _, args := range [][]string{
		statsArgs(),
		ensureArgs(),
		with("inspect", "-family", "sess=onesecond", "r0"),
		append(append([]string{"move", "plan"}, on...), "-family", "sess=onesecond", "-from", "none", "-start", start),
	} {
		for _, profile := range []string{"", "batch"} {
			w.seen()
			run := args
			if profile != "" {
				run = append(append([]string{}, args...), "-app-profile", profile)
			}
			_, stderr, code := cellttl(run...)
			assert.NotEqual(t, exitUsage, code, "%v: %s", run, stderr)
			assert.NotEqual(t, exitFailed, code, "%v: %s", run, stderr)
			profiles, _ := w.seen()
			assert.NotEmpty(t, profiles[profile], "%v: no request with profile %q", run, profile)
			assert.Len(t, profiles, 1, "%v: every request with profile %q: %v", run, profile, profiles)
		}
	}
}

// TestScanCutShort checks a scan that does not finish: the last shard's
// read stalls until -timeout. stats and ensure print the counts of the
// four shards read, labelled partial, decide nothing and exit 1.
func TestScanCutShort(t *testing.T) {
	w := startWatched(t, seeded)
	w.seed(t, time.Now())
	w.stall = "r8"

	stdout, stderr, code := cellttl(statsArgs("-timeout", "500ms")...)
	assert.Equal(t, exitFailed, code)
	assert.Regexp(t, `^table "t" at \S+: the scan stopped after 4 of 5 shards: the counts below are partial;`, stdout)
	assert.Contains(t, stdout, "\nsess    OneSecond()                 never   ≥6 cells (120 B)  ≥2 cells (40 B)  0               ≥2 cells (40 B)\n")
	assert.Contains(t, stdout, "\nclicks  DefaultExpiration(48h0m0s)  never   ≥8 cells (144 B)  0 ")
	assert.Contains(t, stdout, "  scan: 4 of 5 shards read (partial), 4 reads, 8 rows and 17 cells seen")
	assert.Contains(t, stderr, "DeadlineExceeded")
	assert.Contains(t, stderr, "cellttl stats: the scan did not finish: the counts above are partial\n")

	stdout, _, code = cellttl(statsArgs("-timeout", "500ms", "-format", "json")...)
	assert.Equal(t, exitFailed, code)
	a := decodeAudit(t, stdout)
	assert.False(t, a.Read.Complete)
	assert.False(t, a.Read.Estimate)
	assert.Equal(t, 4, a.Read.ShardsRead)
	assert.Equal(t, int64(2), a.Families[2].Expired.Cells)

	// ensure, even with -apply: nothing decided, nothing changed.
	stdout, stderr, code = cellttl(ensureArgs("-timeout", "500ms", "-apply")...)
	assert.Equal(t, exitFailed, code)
	assert.Regexp(t, `^table "t" at \S+: the scan stopped after 4 of 5 shards: nothing decided, nothing changed; the counts below are partial\n`, stdout)
	assert.Contains(t, stdout, "never  maxage=2d  undecided  ≥0\n")
	assert.Contains(t, stdout, "never  maxage=1s  undecided  ≥2\n")
	assert.NotContains(t, stdout, "refused")
	assert.Contains(t, stdout, "  scan: 4 of 5 shards read (partial)")
	assert.Contains(t, stderr, "cellttl ensure: the scan did not finish: nothing was decided or changed, the counts above are partial\n")
	assert.NotContains(t, stderr, "-allow-data-loss")
	assert.Equal(t, map[string]string{"sess": "", "clicks": "", "meta": ""}, policies(t, w.e.Admin), "nothing changed")

	stdout, _, code = cellttl(ensureArgs("-timeout", "500ms", "-format", "json")...)
	assert.Equal(t, exitFailed, code)
	p := decodePlan(t, stdout)
	assert.False(t, p.Read.Complete, "nothing decided")
	assert.False(t, p.Read.Estimate)
	assert.Equal(t, 4, p.Read.ShardsRead)
	for _, f := range p.Families {
		assert.False(t, f.Refused, f.Family)
		assert.False(t, f.Done, f.Family)
	}
}
