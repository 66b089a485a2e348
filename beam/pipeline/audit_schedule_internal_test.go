package pipeline

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/cellttl/ttl/audit"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/schedule"
)

// TestScheduleCoder: a ScheduleReport that crossed the shuffle (its
// coder) keeps every bucket, empty ones too, so that the combiner merges
// it with another, and what it read; and the combiner refuses a report
// of another schedule or a payload that is not a report.
func TestScheduleCoder(t *testing.T) {
	now := time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)
	fn := &mergeSchedulesFn{Schedule: "s", Data: "t", Now: now, Policy: "maxage=1h", Shards: 2}
	shard := func(due time.Duration) *audit.ScheduleReport {
		r := fn.CreateAccumulator()
		r.AddKey(schedule.Key("row", now.Add(due)))
		r.Read = scan.Stats{Reads: 1, RowsSeen: 1, CellsSeen: 1, RowsReturned: 1, CellsReturned: 1, ShardsRead: 1}
		return r
	}
	var crossed [2]*audit.ScheduleReport
	for i, r := range []*audit.ScheduleReport{shard(-time.Hour), shard(time.Minute)} {
		b, err := marshalSchedule(r)
		if err != nil {
			t.Fatal(err)
		}
		if crossed[i], err = decodeSchedule(b); err != nil {
			t.Fatal(err)
		}
		if len(crossed[i].Due) != len(r.Due) {
			t.Fatalf("%d buckets decoded of %d", len(crossed[i].Due), len(r.Due))
		}
	}
	a, err := fn.AddInput(fn.CreateAccumulator(), crossed[0])
	if err != nil {
		t.Fatal(err)
	}
	if a, err = fn.MergeAccumulators(a, crossed[1]); err != nil {
		t.Fatal(err)
	}
	got := fn.ExtractOutput(a)
	if got.Entries != 2 || got.Behind != 1 || got.Ahead != 1 || got.Read.Reads != 2 || got.Read.ShardsRead != 2 || !got.Read.Complete() {
		t.Errorf("merged %s, read %+v: want 2 entries, 1 behind, 1 ahead, 2 shards read of 2", got, got.Read)
	}

	other := &mergeSchedulesFn{Schedule: "other", Data: "t", Now: now}
	if _, err := fn.AddInput(fn.CreateAccumulator(), other.CreateAccumulator()); err == nil {
		t.Error("a report of another schedule merged")
	}
	if _, err := decodeSchedule([]byte("[]")); err == nil {
		t.Error("decoded a JSON array as a report")
	}
	if _, err := json.Marshal(got); err != nil {
		t.Error(err)
	}
}
