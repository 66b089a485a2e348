package pipeline_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/audit"
	"github.com/cellttl/ttl/beam/pipeline"
	"github.com/cellttl/ttl/scan"
)

func TestMain(m *testing.M) {
	flag.Parse()
	beam.Init()
	os.Exit(m.Run())
}

// now is the instant the audits judge by: in the future, so that the
// emulator's GC, which ages cells by the real clock, removes nothing while
// the two audits read the table.
var now = time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)

// The families of the test table, their strategies as -family takes them,
// and their GC policies.
var (
	specs = map[string]string{"sess": "onesecond", "clicks": "default:48h", "rev": "seqnum:2"}
	gc    = map[string]bigtable.GCPolicy{
		"sess":   bigtable.MaxAgePolicy(time.Second),
		"clicks": nil, // no GC: its expired cells are never collected
		"rev":    nil,
		"meta":   nil, // no strategy: every cell live, forever
		"hist":   bigtable.UnionPolicy(bigtable.MaxAgePolicy(365*24*time.Hour), bigtable.MaxVersionsPolicy(5)),
		"pair":   bigtable.IntersectionPolicy(bigtable.MaxAgePolicy(30*24*time.Hour), bigtable.MaxVersionsPolicy(1)),
	}
)

// rows is how many rows the test table has: enough for the emulator, which
// samples one row key in a hundred (and the last), to split it into
// several shards.
const rows = 600

// newTable starts an emulator for the test, points the pipeline's clients
// at it, and fills a table with cells of every kind: live, expired,
// Forever, superseded versions, and cells of families without a strategy.
func newTable(t *testing.T) (pipeline.Table, *bigtable.AdminClient, *bigtable.Table) {
	t.Helper()
	admin, client := newEmulator(t)
	tbl := pipeline.Table{Project: "proj", Instance: "inst", Table: "events"}
	createTable(t, admin, tbl.Table, gc)
	data := client.Open(tbl.Table)

	stamp := func(s ttl.Strategy, written time.Time, life ttl.Lifetime) bigtable.Timestamp {
		t.Helper()
		ts, err := s.Timestamp(written, life)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	sess, clicks, rev := ttl.OneSecond(), ttl.DefaultExpiration(48*time.Hour), ttl.SequenceNumbers(2)
	keys := make([]string, rows)
	muts := make([]*bigtable.Mutation, rows)
	for i := range keys {
		keys[i] = fmt.Sprintf("user#%04d", i)
		m := bigtable.NewMutation()
		value := []byte(strings.Repeat("v", i%17))
		ago := func(d time.Duration) time.Time { return now.Add(-time.Duration(i) * d) }
		// sess: live for minutes to days, expired an hour to weeks ago, Forever.
		m.Set("sess", "live", stamp(sess, now, ttl.For(time.Duration(i+1)*17*time.Minute)), value)
		if i%3 == 0 {
			m.Set("sess", "dead", stamp(sess, ago(time.Hour), ttl.For(30*time.Minute)), value)
		}
		if i%7 == 0 {
			m.Set("sess", "keep", stamp(sess, now, ttl.Forever), value)
		}
		// clicks: a column written twice, the older write often expired.
		m.Set("clicks", "c", stamp(clicks, ago(10*time.Minute), ttl.Default), value)
		m.Set("clicks", "c", stamp(clicks, ago(20*time.Minute).Add(-24*time.Hour), ttl.Default), value)
		if i%11 == 0 {
			m.Set("clicks", "pin", stamp(clicks, now, ttl.Forever), value)
		}
		// rev: 1 to 4 versions, the two newest live.
		for v := 1; v <= 1+i%4; v++ {
			m.Set("rev", "doc", stamp(rev, now, ttl.Version(int64(v))), value)
		}
		// Families without a strategy.
		m.Set("meta", "m", bigtable.Time(ago(time.Minute)), value)
		for v := 0; v < 1+i%3; v++ {
			m.Set("hist", "h", bigtable.Time(ago(time.Hour).Add(-time.Duration(v)*time.Second)), value)
		}
		if i%5 == 0 {
			m.Set("pair", "p", bigtable.Time(now), value)
		}
		muts[i] = m
	}
	applyBulk(t, data, keys, muts)
	return tbl, admin, data
}

// runAudit runs the audit pipeline on Prism, in this process, and returns
// the audit it wrote.
func runAudit(t *testing.T, cfg pipeline.AuditConfig) *audit.Report {
	t.Helper()
	var a audit.Report
	runPipeline(t, func(ctx context.Context, s beam.Scope) (beam.PCollection, error) {
		return pipeline.Audit(ctx, s, cfg)
	}, &a)
	return &a
}

// TestAuditMatchesAuditTable runs the pipeline on a table with cells of
// every kind and checks that it counts what audit.Auditor.Run counts on the
// same table at the same instant, family by family and bucket by bucket,
// and that its scan read every shard, of several.
func TestAuditMatchesAuditTable(t *testing.T) {
	tbl, admin, data := newTable(t)
	strategies := map[string]ttl.Strategy{}
	for _, f := range []struct {
		name string
		s    ttl.Strategy
	}{{"sess", ttl.OneSecond()}, {"clicks", ttl.DefaultExpiration(48 * time.Hour)}, {"rev", ttl.SequenceNumbers(2)}} {
		strategies[f.name] = f.s
	}
	for _, values := range []bool{false, true} {
		t.Run(fmt.Sprintf("values=%v", values), func(t *testing.T) {
			auditor, err := audit.New(admin, data, tbl.Table, strategies,
				audit.Options{Values: values, Scan: scan.Options{Now: func() time.Time { return now }}})
			if err != nil {
				t.Fatal(err)
			}
			want, err := auditor.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			got := runAudit(t, pipeline.AuditConfig{Table: tbl, Families: specs, Now: now, Values: values})

			if !got.Now.Equal(now) || got.Table != tbl.Table || got.Values != values {
				t.Errorf("audit of %q at %v, values %v; want %q at %v, values %v", got.Table, got.Now, got.Values, tbl.Table, now, values)
			}
			gotJSON, wantJSON := familiesJSON(t, got), familiesJSON(t, want)
			if gotJSON != wantJSON {
				t.Errorf("families differ from audit.Auditor.Run's:\npipeline:\n%s\naudit.Auditor.Run:\n%s", gotJSON, wantJSON)
			}
			g, w := got.Read, want.Read
			if g.RowsReturned != rows || g.RowsReturned != w.RowsReturned || g.CellsReturned != w.CellsReturned ||
				g.RowsSeen != w.RowsSeen || g.CellsSeen != w.CellsSeen {
				t.Errorf("scan %+v; audit.Auditor.Run's %+v", g, w)
			}
			if g.Shards < 2 || g.ShardsRead != g.Shards || g.Reads != g.Shards || !g.Complete() {
				t.Errorf("scan %+v: want several shards, each read once, complete", g)
			}
			t.Log("\n" + got.String())
		})
	}
}

// familiesJSON returns the families of a, as JSON.
func familiesJSON(t *testing.T, a *audit.Report) string {
	t.Helper()
	b, err := json.MarshalIndent(a.Families, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAuditRefusesBadConfig checks that a configuration the workers could
// not use fails while the pipeline is built.
func TestAuditRefusesBadConfig(t *testing.T) {
	tbl, _, _ := newTable(t)
	missing := tbl
	missing.Table = "nope"
	for _, tc := range []struct {
		name string
		cfg  pipeline.AuditConfig
		want string
	}{
		{"bad spec", pipeline.AuditConfig{Table: tbl, Families: map[string]string{"sess": "seqnum:0"}}, "seqnum:0: want a positive number"},
		{"bad strategy", pipeline.AuditConfig{Table: tbl, Families: map[string]string{"sess": "hourly"}}, `strategy "hourly"`},
		{"no table", pipeline.AuditConfig{Table: pipeline.Table{Project: "proj", Instance: "inst"}}, "needs a project, an instance and a table"},
		{"missing table", pipeline.AuditConfig{Table: missing}, `table "nope"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, s := beam.NewPipelineWithRoot()
			_, err := pipeline.Audit(context.Background(), s, tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v; want one containing %q", err, tc.want)
			}
		})
	}
}
