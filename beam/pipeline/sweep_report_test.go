package pipeline_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cellttl/ttl/beam/pipeline"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/sweep"
)

// TestSweepResultReport: a round's result is sweep's Report of it, its
// granularity parsed, complete once every shard was read.
func TestSweepResultReport(t *testing.T) {
	from := time.Date(2030, 4, 30, 8, 0, 0, 0, time.UTC)
	r := &pipeline.SweepResult{Table: "sessions", Granularity: "row", From: from, Until: from.Add(time.Hour), Events: 4,
		Expired: scan.Count{Cells: 6, Bytes: 90}, Deleted: 3, Read: scan.Stats{Shards: 2, ShardsRead: 2, Reads: 2}}
	got := r.Report()
	want := &sweep.Report{Table: "sessions", Granularity: sweep.Row, From: from, Until: from.Add(time.Hour), Events: 4,
		Expired: scan.Count{Cells: 6, Bytes: 90}, Deleted: 3, Read: scan.Stats{Shards: 2, ShardsRead: 2, Reads: 2}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("report %+v, want %+v", got, want)
	}
	if s := got.String(); !strings.HasPrefix(s, `sweep of table "sessions", expiries after 2030-04-30T08:00:00.000Z up to 2030-04-30T09:00:00.000Z: complete; 4 row events`) {
		t.Errorf("the round sums itself up as %q", s)
	}
	if !r.Complete() || !got.Complete() {
		t.Errorf("every shard read: %+v is not complete", r.Read)
	}
	r.Read.ShardsRead = 1
	if r.Complete() {
		t.Errorf("1 of 2 shards read: complete")
	}
}
