package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/beam/pipeline"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/sweep"
)

// The round the sweep tests sweep: the expiries after from, up to now
// less margin. now is in the future, so that the emulator's GC, which ages
// cells by the real clock, removes nothing.
var (
	sweepMargin = 10 * time.Second
	sweepFrom   = now.Add(-2 * time.Hour)
	sweepUntil  = now.Add(-sweepMargin)
)

// The swept families, their strategies as -family takes them and as the
// library does; meta is a family not swept.
var (
	sweepSpecs      = map[string]string{"sess": "onesecond", "clicks": "default:48h", "g": "grace:10m:onesecond"}
	sweepStrategies = map[string]ttl.Strategy{"sess": ttl.OneSecond(), "clicks": ttl.DefaultExpiration(48 * time.Hour),
		"g": ttl.Grace(ttl.OneSecond(), 10*time.Minute)}
)

// sweepRows is how many rows the tests' tables have: enough for several
// shards.
const sweepRows = 600

// newSweepTables starts an emulator for the test and fills the tables
// named with the same cells (fillSweepTable), of sweepRows rows.
func newSweepTables(t *testing.T, names ...string) (*bigtable.AdminClient, map[string]*bigtable.Table) {
	t.Helper()
	return newSweepTablesOf(t, sweepRows, names...)
}

// newSweepTablesOf starts an emulator for the test and fills the tables
// named with the same cells, of rows rows.
func newSweepTablesOf(t *testing.T, rows int, names ...string) (*bigtable.AdminClient, map[string]*bigtable.Table) {
	t.Helper()
	admin, client := newEmulator(t)
	tables := map[string]*bigtable.Table{}
	for _, name := range names {
		createTable(t, admin, name, map[string]bigtable.GCPolicy{"sess": nil, "clicks": nil, "g": nil, "meta": nil})
		tables[name] = client.Open(name)
		fillSweepTable(t, tables[name], rows)
	}
	return admin, tables
}

// fillSweepTable writes cells of every kind a round meets: expired in its
// window (at its very end too), expired before it (and at its very start),
// live, Forever, a column kept alive by a newer cell, several expired
// cells in a column, write-time companions, a family not swept, and a row
// key and a column that are not UTF-8: n rows.
func fillSweepTable(t *testing.T, data *bigtable.Table, n int) {
	t.Helper()
	written := sweepFrom.Add(-3 * time.Hour)
	stamp := func(family string, life ttl.Lifetime) bigtable.Timestamp {
		t.Helper()
		ts, err := sweepStrategies[family].Timestamp(written, life)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	at := func(family string, expiry time.Time) bigtable.Timestamp { return stamp(family, ttl.Until(expiry)) }
	keys := make([]string, n)
	muts := make([]*bigtable.Mutation, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("user#%04d", i)
		if i == 42 {
			keys[i] = "\xfe\xffbinary#42"
		}
		value := []byte(strings.Repeat("v", 1+i%13))
		m := bigtable.NewMutation()
		after := func(d time.Duration) time.Time { return sweepFrom.Add(time.Duration(i%1000+1) * d) } // within the round
		if i%2 == 0 {
			ts := at("sess", after(7*time.Second))
			m.Set("sess", "a", ts, value)
			if i%6 == 0 {
				m.Set("sess", ttl.WriteTimePrefix+"a", ts, []byte("12345678"))
			}
		}
		if i%3 == 0 {
			m.Set("sess", "a", at("sess", sweepUntil.Add(time.Duration(i)*time.Minute+time.Second)), value)
		}
		if i%5 == 0 {
			m.Set("sess", "b", at("sess", sweepFrom.Add(-time.Duration(i)*time.Second)), value)
		}
		if i%7 == 0 {
			m.Set("sess", "keep", stamp("sess", ttl.Forever), value)
		}
		if i%4 == 1 {
			m.Set("sess", "c", at("sess", after(3*time.Second)), value)
			m.Set("sess", "c", at("sess", after(5*time.Second)), value)
		}
		if i%2 == 1 {
			m.Set("clicks", "c", at("clicks", after(5*time.Second)), value)
		}
		if i%9 == 0 {
			m.Set("clicks", "c", at("clicks", sweepUntil.Add(time.Hour)), value)
		}
		switch i % 10 {
		case 3:
			m.Set("g", "x", at("g", sweepUntil), value) // the round's last instant: in it
		case 4:
			m.Set("g", "x", at("g", sweepFrom), value) // its start: in the round before
		}
		m.Set("meta", "m", bigtable.Time(written), value)
		muts[i] = m
	}
	applyBulk(t, data, keys, muts)
}

// sweepConfig returns the round's configuration for table, its events
// written in the test's directory.
func sweepConfig(t *testing.T, table string) pipeline.SweepConfig {
	return pipeline.SweepConfig{
		Table:    pipeline.Table{Project: "proj", Instance: "inst", Table: table},
		Families: sweepSpecs,
		From:     sweepFrom,
		Now:      now,
		Margin:   sweepMargin,
		Output:   filepath.Join(t.TempDir(), "events.jsonl"),
	}
}

// runSweep runs the sweep pipeline on Prism and returns its result, the
// lines of its events' file, sorted, and its counters.
func runSweep(t *testing.T, cfg pipeline.SweepConfig) (*pipeline.SweepResult, []string, map[string]int64) {
	t.Helper()
	var r pipeline.SweepResult
	counters := runPipeline(t, func(ctx context.Context, s beam.Scope) (beam.PCollection, error) {
		return pipeline.Sweep(ctx, s, cfg)
	}, &r)
	b, err := os.ReadFile(cfg.Output)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(b) == 0 {
		lines = nil
	}
	sort.Strings(lines)
	return &r, lines, counters
}

// sweepOnce runs the in-process sweep of the same round, with cfg's
// options (its schedule table too), on data: sweep.Sweeper.Once, on a
// clock at now from the round's start. It returns its report and its
// events as JSON lines, sorted.
func sweepOnce(t *testing.T, admin *bigtable.AdminClient, data *bigtable.Table, cfg pipeline.SweepConfig) (*sweep.Report, []string) {
	t.Helper()
	opts := sweep.Options{
		Since: cfg.From, Margin: cfg.Margin, Granularity: cfg.Granularity,
		Values: cfg.Values, WriteTimes: cfg.WriteTimes, Delete: cfg.Delete, Batch: 7, Scan: scan.Options{Now: func() time.Time { return now }}}
	if cfg.Schedule != "" {
		client, err := cfg.Table.Open(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer client.Close()
		opts.Schedule, opts.ScheduleTable = client.Open(cfg.Schedule), cfg.Schedule
	}
	s, err := sweep.New(admin, data, cfg.Table.Table, sweepStrategies, opts)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var lines []string
	rep, err := s.Once(context.Background(), func(_ context.Context, events []sweep.Event) error {
		mu.Lock()
		defer mu.Unlock()
		for _, e := range events {
			b, err := json.Marshal(e)
			if err != nil {
				return err
			}
			lines = append(lines, string(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Complete() {
		t.Fatalf("the in-process sweep is not complete:\n%s", rep)
	}
	sort.Strings(lines)
	return rep, lines
}

// TestSweepMatchesOnce runs the pipeline on a table with cells of every
// kind a round meets, at each granularity, and checks that its events'
// file holds, line for line, the events sweep.Sweeper.Once delivers for
// the same round on the same table, that its counts are Once's, and that
// it read every shard, of several.
func TestSweepMatchesOnce(t *testing.T) {
	admin, tables := newSweepTables(t, "events")
	for _, tc := range []struct {
		g                  sweep.Granularity
		values, writeTimes bool
		min                int // the fewest events expected
	}{
		{g: sweep.Cell, values: true, min: 500},
		{g: sweep.Cell, writeTimes: true, min: 500},
		{g: sweep.Column, writeTimes: true, min: 300},
		{g: sweep.Column, values: true, min: 300},
		{g: sweep.Row, min: 100},
	} {
		t.Run(fmt.Sprintf("%v,values=%v,write-times=%v", tc.g, tc.values, tc.writeTimes), func(t *testing.T) {
			cfg := sweepConfig(t, "events")
			cfg.Granularity, cfg.Values, cfg.WriteTimes = tc.g, tc.values, tc.writeTimes
			want, wantLines := sweepOnce(t, admin, tables["events"], cfg)
			got, gotLines, counters := runSweep(t, cfg)

			if len(wantLines) < tc.min {
				t.Fatalf("Once delivered %d events; the table should make at least %d", len(wantLines), tc.min)
			}
			if !reflect.DeepEqual(gotLines, wantLines) {
				t.Errorf("the pipeline's %d events differ from Once's %d:\n%s", len(gotLines), len(wantLines), diffLines(gotLines, wantLines))
			}
			if got.Events != want.Events || got.Events != int64(len(gotLines)) || counters["events"] != got.Events {
				t.Errorf("events: result %d, file %d, counter %d; Once's %d", got.Events, len(gotLines), counters["events"], want.Events)
			}
			if got.Expired != want.Expired {
				t.Errorf("expired %+v; Once's %+v", got.Expired, want.Expired)
			}
			if !got.From.Equal(want.From) || !got.Until.Equal(want.Until) || got.Table != want.Table || got.Granularity != tc.g.String() ||
				got.Output != cfg.Output || got.Delete || got.Deleted != 0 || !reflect.DeepEqual(got.Families, sweepSpecs) {
				t.Errorf("result %+v; want the round of Once's report %+v", got, want)
			}
			g, w := got.Read, want.Read
			if g.RowsReturned != w.RowsReturned || g.CellsReturned != w.CellsReturned || g.RowsSeen != w.RowsSeen || g.CellsSeen != w.CellsSeen {
				t.Errorf("read %+v; Once's %+v", g, w)
			}
			if g.Shards < 2 || g.ShardsRead != g.Shards || g.Reads != g.Shards || !got.Complete() {
				t.Errorf("read %+v: want several shards, each read once, complete", g)
			}
		})
	}
}

// diffLines returns the lines only one of got and want holds.
func diffLines(got, want []string) string {
	count := map[string]int{}
	for _, l := range got {
		count[l]++
	}
	for _, l := range want {
		count[l]--
	}
	var b strings.Builder
	for l, n := range count {
		switch {
		case n > 0:
			fmt.Fprintf(&b, "only the pipeline's (%d): %s\n", n, l)
		case n < 0:
			fmt.Fprintf(&b, "only Once's (%d): %s\n", -n, l)
		}
	}
	return b.String()
}

// TestSweepDeletesAsOnceDoes sweeps with deletion two tables of the same
// cells, one with the pipeline and one with Once, and checks that they
// report the same events and leave the same cells, cell for cell; then
// that the same round, run again, finds nothing left to report. The
// tables have enough rows to delete for more than one batch.
func TestSweepDeletesAsOnceDoes(t *testing.T) {
	admin, tables := newSweepTablesOf(t, 3*sweep.DefaultBatch, "a", "b")
	before := allCells(t, tables["a"])
	cfg := sweepConfig(t, "a")
	cfg.Granularity, cfg.WriteTimes, cfg.Delete = sweep.Column, true, true
	got, gotLines, counters := runSweep(t, cfg)
	cfg.Table.Table = "b"
	want, wantLines := sweepOnce(t, admin, tables["b"], cfg)

	// The tables' names aside, the events are the same.
	gotLines, wantLines = inTable(t, gotLines, "t"), inTable(t, wantLines, "t")
	if !reflect.DeepEqual(gotLines, wantLines) {
		t.Errorf("the pipeline's %d events differ from Once's %d:\n%s", len(gotLines), len(wantLines), diffLines(gotLines, wantLines))
	}
	if got.Deleted != want.Deleted || got.Deleted < 2*sweep.DefaultBatch || counters["rows_deleted"] != got.Deleted || !got.Delete {
		t.Errorf("deleted in %d rows (counter %d); Once in %d", got.Deleted, counters["rows_deleted"], want.Deleted)
	}
	a, b := allCells(t, tables["a"]), allCells(t, tables["b"])
	if a != b {
		t.Errorf("the tables differ after the deletions:\npipeline:\n%s\nOnce:\n%s", a, b)
	}
	if before == a {
		t.Error("the deletions deleted nothing")
	}

	// Everything that expired in the round is gone: the same round
	// reports nothing, in an empty file, and deletes nothing.
	again := sweepConfig(t, "a")
	again.Delete = true
	r, lines, _ := runSweep(t, again)
	if r.Events != 0 || len(lines) != 0 || r.Deleted != 0 || r.Expired.Cells != 0 || !r.Complete() {
		t.Errorf("the round again: %+v, %d lines; want nothing", r, len(lines))
	}
}

// inTable returns the events of lines, JSON lines, as if of table, sorted.
func inTable(t *testing.T, lines []string, table string) []string {
	t.Helper()
	var out []string
	for _, l := range lines {
		var e sweep.Event
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		e.Table = table
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	sort.Strings(out)
	return out
}

// allCells returns every cell of data, one a line, by row, column and
// timestamp.
func allCells(t *testing.T, data *bigtable.Table) string {
	t.Helper()
	var b strings.Builder
	err := data.ReadRows(context.Background(), bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		var families []string
		for f := range r {
			families = append(families, f)
		}
		sort.Strings(families)
		for _, f := range families {
			for _, it := range r[f] {
				fmt.Fprintf(&b, "%q %q %d %q\n", it.Row, it.Column, it.Timestamp, it.Value)
			}
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestSweepWriteFailsDeletesNothing: a job that cannot write its events
// fails, and deletes nothing.
func TestSweepWriteFailsDeletesNothing(t *testing.T) {
	_, tables := newSweepTables(t, "events")
	before := allCells(t, tables["events"])
	cfg := sweepConfig(t, "events")
	cfg.Delete = true
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.Output = filepath.Join(notDir, "events.jsonl") // under a file: cannot be created
	err := runFailing(t, cfg)
	if err == nil || !strings.Contains(err.Error(), "writing the events") {
		t.Errorf("error %v; want the write's", err)
	}
	if after := allCells(t, tables["events"]); after != before {
		t.Error("a sweep that could not write its events deleted cells")
	}
}

// TestSweepRefusesBadConfig checks that a round the workers could not
// sweep, or should not, fails while the pipeline is built.
func TestSweepRefusesBadConfig(t *testing.T) {
	newSweepTables(t, "events")
	good := sweepConfig(t, "events")
	with := func(change func(*pipeline.SweepConfig)) pipeline.SweepConfig {
		cfg := good
		change(&cfg)
		return cfg
	}
	for _, tc := range []struct {
		name string
		cfg  pipeline.SweepConfig
		want string
		is   error
	}{
		{"no table", with(func(c *pipeline.SweepConfig) { c.Table.Table = "" }), "needs a project, an instance and a table", nil},
		{"no family", with(func(c *pipeline.SweepConfig) { c.Families = nil }), "no family to sweep", ttl.ErrInvalidOption},
		{"no start", with(func(c *pipeline.SweepConfig) { c.From = time.Time{} }), "a round needs its start", ttl.ErrInvalidOption},
		{"no output", with(func(c *pipeline.SweepConfig) { c.Output = "" }), "needs a file to write its events to", nil},
		{"unknown filesystem", with(func(c *pipeline.SweepConfig) { c.Output = "nosuch://bucket/events" }), `the events' file:`, nil},
		{"negative margin", with(func(c *pipeline.SweepConfig) { c.Margin = -time.Second }), "margin -1s", ttl.ErrInvalidOption},
		{"until within the margin", with(func(c *pipeline.SweepConfig) { c.Until = now.Add(-time.Second) }),
			"less than its margin (10s) before now (2030-04-30T09:00:00Z)", ttl.ErrInvalidOption},
		{"empty round", with(func(c *pipeline.SweepConfig) { c.Until = c.From }), "the end must be after the start", ttl.ErrInvalidOption},
		{"bad spec", with(func(c *pipeline.SweepConfig) { c.Families = map[string]string{"sess": "hourly"} }), `family "sess": strategy "hourly"`, nil},
		{"versions", with(func(c *pipeline.SweepConfig) { c.Families = map[string]string{"sess": "seqnum:2"} }), "under SequenceNumbers none does", ttl.ErrInvalidStrategy},
		{"missing family", with(func(c *pipeline.SweepConfig) { c.Families = map[string]string{"nope": "onesecond"} }),
			`table "events" has no family "nope" to sweep`, policy.ErrFamilyMismatch},
		{"missing family, judged now", with(func(c *pipeline.SweepConfig) {
			c.Families, c.Now, c.Margin, c.From = map[string]string{"nope": "onesecond"}, time.Time{}, 0, time.Now().Add(-time.Hour)
		}), `table "events" has no family "nope" to sweep`, policy.ErrFamilyMismatch},
		{"missing table", with(func(c *pipeline.SweepConfig) { c.Table.Table = "nope" }), `table "nope"`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, s := beam.NewPipelineWithRoot()
			_, err := pipeline.Sweep(context.Background(), s, tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v; want one containing %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v; want one wrapping %v", err, tc.is)
			}
		})
	}
}

// TestSweepDeleteFails: a job whose deletions fail, after its events are
// written, fails. The events' file is of a filesystem of the test's own,
// which the writer opens once every shard is read: the test then deletes
// the table, or a family, so that the deletions, which follow the write,
// fail, whole or for a row.
func TestSweepDeleteFails(t *testing.T) {
	for _, tc := range []struct {
		name   string
		delete func(admin *bigtable.AdminClient) error
		want   string
	}{
		{"table", func(admin *bigtable.AdminClient) error { return admin.DeleteTable(context.Background(), "events") },
			"deleting the expired cells of"},
		{"family", func(admin *bigtable.AdminClient) error {
			return admin.DeleteColumnFamily(context.Background(), "events", "g")
		},
			"deleting the expired cells of row"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			admin, _ := newSweepTables(t, "events")
			cfg := sweepConfig(t, "events")
			cfg.Delete, cfg.Output = true, "hook://events.jsonl"
			setHook(t, func() error { return tc.delete(admin) }, nil)
			err := runFailing(t, cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v; want one containing %q", err, tc.want)
			}
		})
	}
}

// TestSweepWriteCloseFails: a job whose events' file fails as it is
// closed (a write not committed) fails, and deletes nothing. Prism may run
// the steps that wait for the write though it failed, and report their
// refusal (writtenCount's) first: either error is the job's.
func TestSweepWriteCloseFails(t *testing.T) {
	_, tables := newSweepTables(t, "events")
	before := allCells(t, tables["events"])
	cfg := sweepConfig(t, "events")
	cfg.Delete, cfg.Output = true, "hook://events.jsonl"
	setHook(t, nil, errors.New("bucket gone"))
	err := runFailing(t, cfg)
	if err == nil || !strings.Contains(err.Error(), "writing the events to hook://events.jsonl: bucket gone") &&
		!strings.Contains(err.Error(), "writing the events failed: no expired cell is deleted") {
		t.Errorf("error %v; want the write's", err)
	}
	if after := allCells(t, tables["events"]); after != before {
		t.Error("a sweep that could not write its events deleted cells")
	}
}

// runFailing runs the sweep pipeline on Prism and returns its error.
func runFailing(t *testing.T, cfg pipeline.SweepConfig) error {
	t.Helper()
	p, s := beam.NewPipelineWithRoot()
	if _, err := pipeline.Sweep(context.Background(), s, cfg); err != nil {
		t.Fatal(err)
	}
	_, err := prism.Execute(context.Background(), p)
	return err
}

// The filesystem of scheme hook:// calls hook.open when a file is opened
// for writing, and fails to close it with hook.closeErr; it keeps nothing.
var hook struct {
	open     func() error
	closeErr error
}

func init() {
	filesystem.Register("hook", func(context.Context) filesystem.Interface { return hookFS{} })
}

// setHook sets the hooks for the test.
func setHook(t *testing.T, open func() error, closeErr error) {
	hook.open, hook.closeErr = open, closeErr
	t.Cleanup(func() { hook.open, hook.closeErr = nil, nil })
}

type hookFS struct{}

func (hookFS) OpenWrite(context.Context, string) (io.WriteCloser, error) {
	if hook.open != nil {
		if err := hook.open(); err != nil {
			return nil, err
		}
	}
	return hookFile{}, nil
}

func (hookFS) List(context.Context, string) ([]string, error)          { return nil, nil }
func (hookFS) OpenRead(context.Context, string) (io.ReadCloser, error) { return nil, os.ErrNotExist }
func (hookFS) Size(context.Context, string) (int64, error)             { return 0, os.ErrNotExist }
func (hookFS) Close() error                                            { return nil }

type hookFile struct{}

func (hookFile) Write(b []byte) (int, error) { return len(b), nil }
func (hookFile) Close() error                { return hook.closeErr }
