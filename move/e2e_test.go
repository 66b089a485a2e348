package move_test

// The end-to-end move (issue 12, "Evidence"): 1,000 live sessions with
// real timestamps moved to OneSecond on a standalone emulator process, on
// the real clock, with writers and readers running throughout. The
// emulator runs as a process of its own, so that its GC loop runs on its
// own real clock with the policies the move sets, as Bigtable's would.

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/move"
	"github.com/cellttl/ttl/policy"
)

const (
	e2eSessions = 1000
	// A session lives e2eLifetime after its last write; the sessions of
	// the setup were written up to e2eOldest before it, so that some of
	// the old cells expire by their rule while the move runs.
	e2eLifetime = 12 * time.Second
	e2eOldest   = 8 * time.Second
	// The move starts e2eLead after the setup; the first half of the rows
	// is rewritten e2eRewriteAt after the start, the second half waits
	// for its old cells to expire.
	e2eLead      = 3 * time.Second
	e2eSkew      = 200 * time.Millisecond
	e2eRewriteAt = 2 * time.Second
	e2eHalf      = "s0500" // the first row of the half that is not rewritten
	// Writers and readers run on under the final policy for e2eFinal, so
	// that the emulator's GC runs with it.
	e2eFinal = 5 * time.Second

	e2eWriters     = 4 // each owns the sessions i with i%e2eWriters == w
	e2eIdleEvery   = 5 // sessions i with i%e2eIdleEvery == 4 are never refreshed
	e2eWritePause  = 15 * time.Millisecond
	e2ePointReader = 2
	e2eReadPause   = 2 * time.Millisecond
	e2eScanEvery   = 200 * time.Millisecond
	e2eRPCTimeout  = 20 * time.Second

	e2eEmulatorVersion = "v1.58.0" // of cloud.google.com/go/bigtable, when the emulator is built
)

// TestMoveEndToEnd moves a family of 1,000 live sessions with real
// timestamps to OneSecond on a standalone emulator, on the real clock,
// while writers refresh sessions and readers read them throughout: the
// plan, the start (the move's window policy), a rewrite of half the rows,
// a finish refused until the other half's old cells have expired, and a
// few seconds under the final policy, maxage=1s. No live session may ever
// be missing from a read, none may be returned from its expiry on, no
// older value may resurface, and every cell read must carry the expiry its
// write gave it (a rewritten cell keeps its own).
//
// It runs the gcloud SDK's cbtemulator (found on PATH or beside gcloud);
// without it, it builds the Bigtable client's emulator command with the
// go command, and skips when that fails too. It takes about 21 s.
func TestMoveEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the end-to-end move runs about 21 s on the real clock")
	}
	began := time.Now()
	bin, how := e2eFindEmulator(t)
	addr, emuLog := e2eStartEmulator(t, bin)
	t.Logf("emulator: %s, at %s (ready %v after the test began)", how, addr, time.Since(began).Round(time.Millisecond))
	e := emulator.ConnectForTest(t, addr)
	ctx := context.Background()
	const table = "sessions"
	raw, err := e.CreateTable(ctx, table, map[string]bigtable.GCPolicy{"sess": nil})
	require.NoError(t, err)

	// The setup: 1,000 sessions with real timestamps, written over the
	// last e2eOldest, each live for e2eLifetime after its write time.
	rec := &e2eRecord{}
	t0 := time.Now()
	keys := make([]string, e2eSessions)
	muts := make([]*bigtable.Mutation, e2eSessions)
	for i := range keys {
		ts := bigtable.Time(t0.Add(-e2eOldest * time.Duration(i%100) / 100)).TruncateToMilliseconds()
		keys[i] = e2eKey(i)
		muts[i] = bigtable.NewMutation()
		muts[i].Set("sess", "tok", ts, []byte(e2eValue(i, 0)))
		expiry := ts.Time().Add(e2eLifetime)
		rec.writes[i] = []e2eWrite{{expLo: expiry, expHi: expiry}}
	}
	errs, err := raw.ApplyBulk(ctx, keys, muts)
	require.NoError(t, err)
	require.Nil(t, errs)

	start := t0.Add(e2eLead).Truncate(time.Millisecond).Add(time.Millisecond)
	mv := ttl.Move{From: nil, To: ttl.OneSecond(), Start: start, Old: ttl.For(e2eLifetime), Skew: e2eSkew}
	moveTbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{"sess": mv}, ttl.OtherFamilies())
	require.NoError(t, err)
	finalTbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{"sess": ttl.OneSecond()}, ttl.OtherFamilies())
	require.NoError(t, err)
	// steps are the move's steps on family "sess", read through data, on
	// the real clock.
	steps := func(data bigtable.TableAPI) *move.Family {
		t.Helper()
		f, err := move.New(e.Admin, data, table, "sess", mv, move.Options{})
		require.NoError(t, err)
		return f
	}
	run := &e2eRun{t: t, rec: rec, moveTbl: moveTbl, finalTbl: finalTbl, start: start, stop: make(chan struct{})}
	run.begin()
	t.Cleanup(run.end) // before the emulator stops: cleanups run last first

	// Plan: every session is a live old cell.
	plan, err := steps(raw).Plan(ctx)
	require.NoError(t, err)
	assert.Equal(t, "never", plan.Found)
	assert.Equal(t, "maxage=12s", plan.Window, "the move's policy: the old cells' lifetime")
	assert.Equal(t, "maxage=1s", plan.Final)
	assert.False(t, plan.Started)
	assert.Equal(t, int64(e2eSessions), plan.OldLive.Cells)
	assert.Zero(t, plan.OldExpired.Cells)
	assert.Zero(t, plan.OldNeverExpire.Cells)
	assert.Zero(t, plan.New.Cells)
	assert.True(t, plan.EndsBy.Equal(start.Add(e2eLifetime+e2eSkew)), "EndsBy %v", plan.EndsBy)
	assert.True(t, plan.Read.Complete())
	_, err = checkPolicies(ctx, e.Admin, table, map[string]ttl.Strategy{"sess": mv})
	assert.ErrorIs(t, err, policy.ErrFamilyMismatch, "no policy yet")

	// Start, before Start: the move's policy.
	started, err := steps(raw).Start(ctx)
	require.NoError(t, err)
	startMoved := time.Now()
	require.True(t, startMoved.Add(e2eSkew).Before(start), "Start must be done a skew before the move's Start; the machine is too slow")
	assert.Equal(t, []string{"GC policy never → maxage=12s"}, started.Actions)
	_, err = checkPolicies(ctx, e.Admin, table, map[string]ttl.Strategy{"sess": mv})
	assert.NoError(t, err)
	_, err = steps(raw).Rewrite(ctx)
	assert.ErrorIs(t, err, ttl.ErrInvalidOption, "no rewrite before Start")
	_, err = steps(raw).Finish(ctx)
	assert.ErrorIs(t, err, ttl.ErrInvalidOption, "no finish before Start")

	// After Start: the finish is refused while old cells are live; the
	// first half of the rows is rewritten (as through a view of them).
	time.Sleep(time.Until(start.Add(e2eRewriteAt)))
	_, err = steps(raw).Finish(ctx)
	assert.ErrorIs(t, err, policy.ErrDataLoss)
	half := e2eRowsBefore{raw, e2eHalf}
	rewroteAt := time.Now()
	rewrite, err := steps(half).Rewrite(ctx)
	require.NoError(t, err)
	t.Logf("rewrite of the rows before %s: %s", e2eHalf, strings.Join(rewrite.Actions, "; "))
	assert.Positive(t, rewrite.Rewritten)
	after, err := steps(half).Plan(ctx)
	require.NoError(t, err)
	assert.Zero(t, after.OldLive.Cells, "no live old cell is left in the rewritten half")

	// The other half's old cells expire by their rule (or writers replace
	// them); Finish refuses until none is live.
	deadline := plan.EndsBy.Add(10 * time.Second)
	refusals := 0
	var finish *move.Report
	for {
		finish, err = steps(raw).Finish(ctx)
		if err == nil {
			break
		}
		require.ErrorIs(t, err, policy.ErrDataLoss)
		refusals++
		require.True(t, time.Now().Before(deadline), "Finish still refuses %v after the move should have ended: %v", time.Since(plan.EndsBy), err)
		time.Sleep(250 * time.Millisecond)
	}
	finished := time.Now()
	run.finished.Store(true)
	assert.Equal(t, "maxage=1s", finish.Found)
	t.Logf("finish: %s", strings.Join(finish.Actions, "; "))

	// Under the final policy for a while, then stop every goroutine.
	time.Sleep(time.Until(finished.Add(e2eFinal)))
	run.end()

	// The family is OneSecond's now, and reads the same as the move did.
	for _, s := range []ttl.Strategy{ttl.OneSecond(), mv} {
		statuses, err := checkPolicies(ctx, e.Admin, table, map[string]ttl.Strategy{"sess": s})
		require.NoError(t, err, "%v", s)
		assert.Equal(t, "maxage=1s", policy.Describe(statuses[0].Found))
	}
	info, err := e.Admin.TableInfo(ctx, table)
	require.NoError(t, err)
	require.Len(t, info.FamilyInfos, 1)
	assert.Equal(t, bigtable.MaxAgePolicy(time.Second), info.FamilyInfos[0].FullGCPolicy)
	for _, tbl := range []*ttl.Table{finalTbl, moveTbl} {
		run.scan(tbl, true)
	}

	// What the emulator stores: its GC, under maxage=1s, removed every old
	// cell and every cell expired more than a GC pass ago.
	stored, oldStored, staleStored := 0, 0, 0
	now := time.Now()
	require.NoError(t, raw.ReadRows(ctx, bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		for _, it := range r["sess"] {
			stored++
			switch {
			case it.Timestamp < move.Boundary(mv):
				oldStored++
			case it.Timestamp.Time().Before(now.Add(-4 * time.Second)):
				staleStored++
			}
		}
		return true
	}))
	assert.Zero(t, oldStored, "old cells left after the finish")
	assert.Zero(t, staleStored, "cells expired more than 4 s ago left under maxage=1s")

	c := &run.counts
	live, ended := rec.census(now)
	t.Logf("sessions %d (%d live at the end, %d expired by their rule); writes %d (%d before Start); point reads %d, scans %d, sessions checked %d",
		e2eSessions, live, ended, c.writes.Load(), c.writesBefore.Load(), c.reads.Load(), c.scans.Load(), c.checks.Load())
	t.Logf("rewritten %d, kept %d; finish refused %d times, finished %v after Start (the old rule's end: %v)",
		rewrite.Rewritten, rewrite.Kept, refusals, finished.Sub(start).Round(time.Millisecond), plan.EndsBy.Sub(start))
	t.Logf("misses %d, late %d, resurfaced %d, wrong expiry %d, several cells %d, unknown values %d, errors %d",
		c.misses.Load(), c.late.Load(), c.resurfaced.Load(), c.mismatched.Load(), c.several.Load(), c.unknown.Load(), c.errors.Load())
	t.Logf("emulator GC deletions by policy: %s; cells stored at the end %d", e2eGCDeletions(emuLog.String()), stored)
	since := func(at time.Time) time.Duration { return at.Sub(t0).Round(time.Millisecond) }
	t.Logf("timeline from the setup: the Start step done %v, the move's Start %v, rewrite %v, finish %v, end %v; wall time %v",
		since(startMoved), since(start), since(rewroteAt), since(finished), since(now), time.Since(began).Round(time.Millisecond))
	for name, n := range map[string]int64{"misses": c.misses.Load(), "late returns": c.late.Load(), "resurfaced values": c.resurfaced.Load(),
		"wrong expiries": c.mismatched.Load(), "reads of several cells": c.several.Load(), "unknown values": c.unknown.Load(), "errors": c.errors.Load()} {
		assert.Zero(t, n, name)
	}
	assert.Positive(t, c.reads.Load())
	assert.Positive(t, c.writes.Load())
}

func e2eKey(i int) string             { return fmt.Sprintf("s%04d", i) }
func e2eValue(i, j int) string        { return fmt.Sprintf("%s#%d", e2eKey(i), j) }
func e2eExpiry(t time.Time) time.Time { return t.Add(e2eLifetime).Truncate(time.Millisecond) }

// e2eParse returns the session and write a value identifies.
func e2eParse(v []byte) (i, j int, ok bool) {
	key, n, found := strings.Cut(string(v), "#")
	if !found || len(key) != 5 || key[0] != 's' {
		return 0, 0, false
	}
	i, err1 := strconv.Atoi(key[1:])
	j, err2 := strconv.Atoi(n)
	return i, j, err1 == nil && err2 == nil && i >= 0 && i < e2eSessions && j >= 0
}

// An e2eWrite is one write of a session: its expiry lies between expLo
// and expHi (the clock's readings before and after the call, plus the
// lifetime, rounded down as the library rounds); expHi is zero while the
// write is in flight.
type e2eWrite struct{ expLo, expHi time.Time }

// e2eRecord is the test's record of every session's writes. Each session
// has one writer, so its writes are in order; write j of session i holds
// the value e2eValue(i, j).
type e2eRecord struct {
	mu     sync.Mutex
	writes [e2eSessions][]e2eWrite
	done   [e2eSessions]int // the last write that returned
}

// e2eSnap is what the record knew of a session before a read: its last
// write that returned.
type e2eSnap struct {
	done  int
	expLo time.Time
}

func (r *e2eRecord) snap(i int) e2eSnap {
	r.mu.Lock()
	defer r.mu.Unlock()
	return e2eSnap{r.done[i], r.writes[i][r.done[i]].expLo}
}

func (r *e2eRecord) snapAll() []e2eSnap {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]e2eSnap, e2eSessions)
	for i := range out {
		out[i] = e2eSnap{r.done[i], r.writes[i][r.done[i]].expLo}
	}
	return out
}

func (r *e2eRecord) begin(i int, now time.Time) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes[i] = append(r.writes[i], e2eWrite{expLo: e2eExpiry(now)})
	return len(r.writes[i]) - 1
}

func (r *e2eRecord) end(i, j int, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes[i][j].expHi = e2eExpiry(now)
	r.done[i] = j
}

func (r *e2eRecord) write(i, j int) (e2eWrite, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if j >= len(r.writes[i]) {
		return e2eWrite{}, false
	}
	return r.writes[i][j], true
}

// census counts the sessions live at now and those expired.
func (r *e2eRecord) census(now time.Time) (live, ended int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.writes {
		if r.writes[i][r.done[i]].expLo.After(now) {
			live++
		} else {
			ended++
		}
	}
	return live, ended
}

type e2eCounts struct {
	writes, writesBefore, reads, scans, checks                     atomic.Int64
	misses, late, resurfaced, mismatched, several, unknown, errors atomic.Int64
}

// An e2eRun is the writers and readers of the test.
type e2eRun struct {
	t                 *testing.T
	rec               *e2eRecord
	moveTbl, finalTbl *ttl.Table
	start             time.Time
	finished          atomic.Bool // the move is finished: half the calls go through finalTbl
	counts            e2eCounts
	stop              chan struct{}
	once              sync.Once
	wg                sync.WaitGroup
	reported          sync.Map // kind → *atomic.Int64, to report a few of each
}

// begin starts the writers and readers.
func (x *e2eRun) begin() {
	for w := 0; w < e2eWriters; w++ {
		x.wg.Add(1)
		go x.writer(w)
	}
	for r := 0; r < e2ePointReader; r++ {
		x.wg.Add(1)
		go x.pointReader(int64(r))
	}
	x.wg.Add(1)
	go x.scanner()
}

// end stops the writers and readers and waits for them.
func (x *e2eRun) end() {
	x.once.Do(func() { close(x.stop) })
	x.wg.Wait()
}

// pause waits d, and reports false when the run is stopping.
func (x *e2eRun) pause(d time.Duration) bool {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-x.stop:
		return false
	case <-tm.C:
		return true
	}
}

// table returns the table a call goes through: the move's, and once the
// move is finished, as often the final strategy's (the processes are
// being reconfigured).
func (x *e2eRun) table(rng *rand.Rand) *ttl.Table {
	if x.finished.Load() && rng.Intn(2) == 0 {
		return x.finalTbl
	}
	return x.moveTbl
}

// fail counts a failure of kind and reports the first few.
func (x *e2eRun) fail(kind string, n *atomic.Int64, format string, args ...any) {
	n.Add(1)
	c, _ := x.reported.LoadOrStore(kind, new(atomic.Int64))
	if c.(*atomic.Int64).Add(1) <= 5 {
		x.t.Errorf(kind+": "+format, args...)
	}
}

// writer refreshes its live active sessions with Replace, so that the
// newest write wins. A session within a second of its expiry has ended
// and is left to expire: the emulator may be collecting its row.
func (x *e2eRun) writer(w int) {
	defer x.wg.Done()
	rng := rand.New(rand.NewSource(int64(w) + 1))
	var own []int
	for i := w; i < e2eSessions; i += e2eWriters {
		if i%e2eIdleEvery != e2eIdleEvery-1 {
			own = append(own, i)
		}
	}
	for x.pause(e2eWritePause) {
		i := own[rng.Intn(len(own))]
		before := time.Now()
		if !x.rec.snap(i).expLo.After(before.Add(time.Second)) {
			continue
		}
		j := x.rec.begin(i, before)
		m := ttl.NewMutation()
		m.Replace("sess", "tok", []byte(e2eValue(i, j)), ttl.For(e2eLifetime))
		ctx, cancel := context.WithTimeout(context.Background(), e2eRPCTimeout)
		err := x.table(rng).Apply(ctx, e2eKey(i), m)
		cancel()
		after := time.Now()
		if err != nil {
			// The write may or may not be made: the record cannot say.
			x.fail("error", &x.counts.errors, "writing %s: %v", e2eKey(i), err)
			return
		}
		x.rec.end(i, j, after)
		x.counts.writes.Add(1)
		if after.Before(x.start) {
			x.counts.writesBefore.Add(1)
		}
	}
}

// pointReader reads one random session at a time.
func (x *e2eRun) pointReader(seed int64) {
	defer x.wg.Done()
	rng := rand.New(rand.NewSource(100 + seed))
	for x.pause(e2eReadPause) {
		i := rng.Intn(e2eSessions)
		tbl := x.table(rng)
		snap := x.rec.snap(i)
		rs := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), e2eRPCTimeout)
		row, err := tbl.ReadRow(ctx, e2eKey(i))
		cancel()
		re := time.Now()
		if err != nil {
			x.fail("error", &x.counts.errors, "reading %s: %v", e2eKey(i), err)
			return
		}
		x.counts.reads.Add(1)
		x.check(tbl, i, snap, row["sess"], rs, re, false)
	}
}

// scanner reads every session, every e2eScanEvery.
func (x *e2eRun) scanner() {
	defer x.wg.Done()
	rng := rand.New(rand.NewSource(200))
	for x.pause(e2eScanEvery) {
		if !x.scan(x.table(rng), false) {
			return
		}
	}
}

// scan reads every session through tbl and checks each; exact (when no
// writer runs) wants each live session's last write.
func (x *e2eRun) scan(tbl *ttl.Table, exact bool) bool {
	snaps := x.rec.snapAll()
	rows := map[string][]bigtable.ReadItem{}
	rs := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), e2eRPCTimeout)
	err := tbl.ReadRows(ctx, bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		rows[r.Key()] = r["sess"]
		return true
	})
	cancel()
	re := time.Now()
	if err != nil {
		x.fail("error", &x.counts.errors, "scanning: %v", err)
		return false
	}
	x.counts.scans.Add(1)
	for i, snap := range snaps {
		x.check(tbl, i, snap, rows[e2eKey(i)], rs, re, exact)
	}
	return true
}

// check judges the cells a read of session i through tbl returned, the
// read having started at rs and ended at re, snap being what the record
// knew before it started.
func (x *e2eRun) check(tbl *ttl.Table, i int, snap e2eSnap, items []bigtable.ReadItem, rs, re time.Time, exact bool) {
	c := &x.counts
	c.checks.Add(1)
	key := e2eKey(i)
	if len(items) == 0 {
		// Its last write, made before the read, expires after the read
		// ended: the session is live whenever the table read its clock.
		if snap.expLo.After(re) {
			x.fail("miss", &c.misses, "%s (write %d, expiring at %v) missing from a read at [%v, %v] through %v",
				key, snap.done, e2eTime(snap.expLo), e2eTime(rs), e2eTime(re), e2eStrategy(tbl, x))
		}
		return
	}
	if len(items) > 1 {
		var got []string
		for _, it := range items {
			got = append(got, fmt.Sprintf("%q at %d", it.Value, it.Timestamp))
		}
		x.fail("several cells", &c.several, "%s: %d cells returned: %s", key, len(items), strings.Join(got, ", "))
	}
	for _, it := range items {
		si, j, ok := e2eParse(it.Value)
		w, known := x.rec.write(i, j)
		if !ok || si != i || !known {
			x.fail("unknown value", &c.unknown, "%s: value %q was never written", key, it.Value)
			continue
		}
		if j < snap.done || exact && j != snap.done {
			x.fail("resurfaced", &c.resurfaced, "%s: write %d returned, write %d was made before the read began", key, j, snap.done)
		}
		exp, ok := tbl.ExpiresAt(it)
		switch {
		case !ok || !exp.After(rs):
			x.fail("late", &c.late, "%s: write %d returned by a read that began at %v; its cell (ts %d) expires at %v",
				key, j, e2eTime(rs), it.Timestamp, e2eTime(exp))
		case !w.expHi.IsZero() && !w.expHi.After(rs):
			x.fail("late", &c.late, "%s: write %d returned by a read that began at %v; it expired by %v",
				key, j, e2eTime(rs), e2eTime(w.expHi))
		}
		if ok && (exp.Before(w.expLo) || !w.expHi.IsZero() && exp.After(w.expHi)) {
			x.fail("wrong expiry", &c.mismatched, "%s: write %d expires at %v, its write gave it [%v, %v]",
				key, j, e2eTime(exp), e2eTime(w.expLo), e2eTime(w.expHi))
		}
	}
}

func e2eTime(t time.Time) string { return t.UTC().Format("15:04:05.000000") }

func e2eStrategy(tbl *ttl.Table, x *e2eRun) string {
	if tbl == x.finalTbl {
		return "OneSecond"
	}
	return "the Move"
}

// e2eRowsBefore is the table as a view of its rows before end: what one
// machine of a rewrite split by rows, or an authorized view, reads.
type e2eRowsBefore struct {
	bigtable.TableAPI
	end string
}

func (v e2eRowsBefore) ReadRows(ctx context.Context, rs bigtable.RowSet, f func(bigtable.Row) bool, opts ...bigtable.ReadOption) error {
	return v.TableAPI.ReadRows(ctx, rs, func(r bigtable.Row) bool {
		return r.Key() >= v.end || f(r)
	}, opts...)
}

func (v e2eRowsBefore) ReadRow(ctx context.Context, row string, opts ...bigtable.ReadOption) (bigtable.Row, error) {
	if row >= v.end {
		return nil, nil
	}
	return v.TableAPI.ReadRow(ctx, row, opts...)
}

// e2eGCDeletions sums the emulator's log of its GC passes by policy.
func e2eGCDeletions(log string) string {
	deleted := map[string]int{}
	for _, m := range regexp.MustCompile(`GC MaxAge\(([^)]*)\) deleted (\d+) cells`).FindAllStringSubmatch(log, -1) {
		n, _ := strconv.Atoi(m[2])
		deleted[strings.TrimSpace(m[1])] += n
	}
	if len(deleted) == 0 {
		return "none logged"
	}
	var out []string
	for p, n := range deleted {
		out = append(out, fmt.Sprintf("MaxAge(%s) %d cells", p, n))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// e2eFindEmulator returns the path of a standalone Bigtable emulator and
// how it was found: gcloud's cbtemulator on PATH or in the SDK of the
// gcloud on PATH; otherwise the client module's emulator command, built
// with the go command into a temporary directory (go install of
// e2eEmulatorVersion, then the version go.mod requires: neither changes
// go.mod or go.sum). It skips the test when none can be had.
func e2eFindEmulator(t *testing.T) (path, how string) {
	t.Helper()
	var tried []string
	if p, err := exec.LookPath("cbtemulator"); err == nil {
		return p, "cbtemulator on PATH (" + p + ")"
	}
	tried = append(tried, "cbtemulator on PATH")
	if gcloud, err := exec.LookPath("gcloud"); err == nil {
		if real, err := filepath.EvalSymlinks(gcloud); err == nil {
			p := filepath.Join(filepath.Dir(filepath.Dir(real)), "platform", "bigtable-emulator", "cbtemulator")
			if e2eExecutable(p) {
				return p, "the gcloud SDK's cbtemulator (" + p + ")"
			}
			tried = append(tried, p+" (not there: gcloud components install bigtable)")
		}
	} else {
		tried = append(tried, "gcloud on PATH")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no standalone Bigtable emulator: looked for %s, and no go command to build one", strings.Join(tried, ", "))
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "emulator")
	const pkg = "cloud.google.com/go/bigtable/cmd/emulator"
	builds := []struct {
		what string
		args []string
		dir  string
		env  []string
	}{
		{"go install " + pkg + "@" + e2eEmulatorVersion, []string{"install", pkg + "@" + e2eEmulatorVersion}, dir, []string{"GOBIN=" + dir}},
		{"go build " + pkg + " (the version go.mod requires)", []string{"build", "-mod=readonly", "-o", bin, pkg}, "", nil},
	}
	for _, b := range builds {
		began := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		cmd := exec.CommandContext(ctx, goCmd, b.args...)
		cmd.Dir = b.dir
		// GOFLAGS of the caller's (a -modfile, say) must not reach the build.
		cmd.Env = append(os.Environ(), append([]string{"GOFLAGS=-buildvcs=false"}, b.env...)...)
		out, err := cmd.CombinedOutput()
		cancel()
		if err == nil && e2eExecutable(bin) {
			return bin, fmt.Sprintf("built with %s in %v", b.what, time.Since(began).Round(time.Millisecond))
		}
		tried = append(tried, fmt.Sprintf("%s: %v: %s", b.what, err, bytes.TrimSpace(out)))
	}
	t.Skipf("no standalone Bigtable emulator: looked for %s", strings.Join(tried, "; "))
	return "", ""
}

func e2eExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// e2eStartEmulator starts the emulator at bin on a free local port, waits
// until it accepts connections, and stops it when the test ends. It
// returns its address and its log.
func e2eStartEmulator(t *testing.T, bin string) (string, *e2eLog) {
	t.Helper()
	var why []string
	for attempt := 0; attempt < 3; attempt++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
		l.Close()
		addr := net.JoinHostPort("127.0.0.1", port)
		log := &e2eLog{}
		cmd := exec.Command(bin, "-host", "127.0.0.1", "-port", port)
		cmd.Stdout, cmd.Stderr = log, log
		e2eDieWithParent(cmd)
		require.NoError(t, cmd.Start())
		exited := make(chan struct{})
		var waitErr error
		go func() { waitErr = cmd.Wait(); close(exited) }()
		stop := func() {
			_ = cmd.Process.Kill()
			<-exited
		}
		if e2eListening(addr, exited, 20*time.Second) {
			t.Cleanup(stop)
			return addr, log
		}
		stop()
		why = append(why, fmt.Sprintf("on port %s: %v: %s", port, waitErr, strings.TrimSpace(log.String())))
	}
	t.Fatalf("the emulator %s did not start: %s", bin, strings.Join(why, "; "))
	return "", nil
}

// e2eListening polls addr until it accepts a connection, and reports
// false when the process exits or the deadline passes first.
func e2eListening(addr string, exited <-chan struct{}, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond); err == nil {
			c.Close()
			return true
		}
		select {
		case <-exited:
			return false
		case <-time.After(10 * time.Millisecond):
		}
	}
	return false
}

// e2eLog is the emulator's output.
type e2eLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *e2eLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *e2eLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
