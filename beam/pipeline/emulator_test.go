package pipeline_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"cloud.google.com/go/bigtable"
	"cloud.google.com/go/bigtable/bttest"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"

	"github.com/cellttl/ttl/beam/pipeline"
)

// newEmulator starts an emulator for the test and points every client at
// it, the pipeline's included, through BIGTABLE_EMULATOR_HOST. It returns
// an admin and a data client of instance proj/inst.
func newEmulator(t *testing.T) (*bigtable.AdminClient, *bigtable.Client) {
	t.Helper()
	srv, err := bttest.NewServer("localhost:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	t.Setenv("BIGTABLE_EMULATOR_HOST", srv.Addr)
	ctx := context.Background()
	admin, err := bigtable.NewAdminClient(ctx, "proj", "inst")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	client, err := pipeline.Table{Project: "proj", Instance: "inst"}.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return admin, client
}

// createTable creates a table with families and their GC policies (nil:
// none).
func createTable(t *testing.T, admin *bigtable.AdminClient, table string, families map[string]bigtable.GCPolicy) {
	t.Helper()
	ctx := context.Background()
	if err := admin.CreateTable(ctx, table); err != nil {
		t.Fatal(err)
	}
	for fam, policy := range families {
		if err := admin.CreateColumnFamily(ctx, table, fam); err != nil {
			t.Fatal(err)
		}
		if policy != nil {
			if err := admin.SetGCPolicy(ctx, table, fam, policy); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// applyBulk applies muts to the rows keys.
func applyBulk(t *testing.T, data *bigtable.Table, keys []string, muts []*bigtable.Mutation) {
	t.Helper()
	errs, err := data.ApplyBulk(context.Background(), keys, muts)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// runPipeline runs on Prism, in this process, a pipeline of the one job
// build adds, its output written with WriteJSON, decodes that output into
// out, and returns the counters of the run by name (namespace cellttl).
func runPipeline(t *testing.T, build func(context.Context, beam.Scope) (beam.PCollection, error), out any) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	p, s := beam.NewPipelineWithRoot()
	col, err := build(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "out.json")
	pipeline.WriteJSON(s, file, col)
	res, err := prism.Execute(ctx, p)
	if err != nil {
		t.Fatalf("the pipeline failed: %v", err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%v in the pipeline's output:\n%s", err, b)
	}
	counters := map[string]int64{}
	for _, c := range res.Metrics().AllMetrics().Counters() {
		if c.Namespace() == "cellttl" {
			counters[c.Name()] += c.Result()
		}
	}
	return counters
}
