package schedule_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/schedule"
)

// TestDelete deletes the entries named, and only those; no keys is no
// request.
func TestDelete(t *testing.T) {
	ctx := context.Background()
	e := emulator.StartForTest(t)
	tbl, err := e.CreateTable(ctx, "sched", map[string]bigtable.GCPolicy{schedule.Family: schedule.Policy(0)})
	if err != nil {
		t.Fatal(err)
	}
	var b schedule.Batch
	for _, row := range []string{"r1", "r2", "r3"} {
		b.Add(row, t0)
	}
	if err := b.Write(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	if err := schedule.Delete(ctx, tbl, "sched", nil); err != nil {
		t.Fatalf("no keys: %v", err)
	}
	if err := schedule.Delete(ctx, tbl, "sched", []string{schedule.Key("r1", t0), schedule.Key("r3", t0)}); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := tbl.ReadRows(ctx, schedule.Ranges(t0, t0.Add(time.Second)), func(r bigtable.Row) bool {
		got = append(got, r.Key())
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if want := schedule.Key("r2", t0); len(got) != 1 || got[0] != want {
		t.Errorf("entries left = %q, want only %q", got, want)
	}
}

// failingTable fails a bulk request whole, or each of its entries.
type failingTable struct {
	bigtable.TableAPI
	whole, entry error
}

func (f failingTable) ApplyBulk(_ context.Context, keys []string, _ []*bigtable.Mutation, _ ...bigtable.ApplyOption) ([]error, error) {
	if f.whole != nil {
		return nil, f.whole
	}
	errs := make([]error, len(keys))
	errs[len(errs)-1] = f.entry
	return errs, nil
}

// TestDeleteFails names the schedule table, and the entry that failed.
func TestDeleteFails(t *testing.T) {
	down := errors.New("unavailable")
	keys := []string{schedule.Key("r1", t0), schedule.Key("r2", t0)}
	for _, tt := range []struct {
		tbl  failingTable
		keys []string
		want string
	}{
		{failingTable{whole: down}, keys[:1], `deleting 1 entry served from schedule table "sched": unavailable`},
		{failingTable{whole: down}, keys, `deleting 2 entries served from schedule table "sched": unavailable`},
		{failingTable{entry: down}, keys, `deleting entry "` + keys[1] + `" from schedule table "sched": unavailable`},
	} {
		err := schedule.Delete(context.Background(), tt.tbl, "sched", tt.keys)
		if !errors.Is(err, down) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Delete: %v, want %q wrapping the table's error", err, tt.want)
		}
	}
}
