//go:build scale

package audit_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/audit"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/scan"
)

// TestScaleTableWide measures the client's peak heap over table-wide work
// as the table grows tenfold: an audit and a policy.Tool.Ensure dry run, 8
// workers, over 20,000 and 200,000 rows of 5 cells (100 B values), the
// emulator in a child process. Each worker holds one row at a time, so the
// heap must not grow with the table.
//
//	go test -tags scale -run '^TestScaleTableWide$' -v -timeout 30m ./audit
func TestScaleTableWide(t *testing.T) {
	ctx := context.Background()
	e, _ := testkit.StartEmulatorChild(t, "TestScaleEmulatorProcess")
	raw := e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": nil})
	value := make([]byte, 100)
	loaded := 0
	load := func(rows int) {
		const chunk = 5_000
		for ; loaded < rows; loaded += chunk {
			keys := make([]string, chunk)
			muts := make([]*bigtable.Mutation, chunk)
			for i := range keys {
				keys[i] = fmt.Sprintf("r%07d", loaded+i)
				muts[i] = bigtable.NewMutation()
				for c := 0; c < 5; c++ {
					// a third expired, a third live, a third never expiring
					ts := []bigtable.Timestamp{ms(base.Add(-time.Hour)), ms(base.Add(time.Hour)), ttl.MaxTimestamp}[(loaded+i+c)%3]
					muts[i].Set("f", fmt.Sprint("c", c), ts, value)
				}
			}
			if errs, err := raw.ApplyBulk(ctx, keys, muts); err != nil || errs != nil {
				t.Fatal(err, errs)
			}
		}
	}
	// SampleRowKeys on the emulator samples one row in a hundred: shards
	// of ~100 rows, thinned to MaxShards.
	families := map[string]ttl.Strategy{"f": ttl.OneSecond()}
	jobs := []struct {
		name string
		run  func() error
	}{
		{"audit", func() error {
			a, err := runAudit(ctx, e.Admin, "t", raw, families, audit.Options{Scan: scan.Options{Now: func() time.Time { return base }}})
			if err == nil && !a.Read.Complete() {
				err = fmt.Errorf("incomplete: %+v", a.Read)
			}
			return err
		}},
		{"ensure dry run", func() error {
			_, err := runEnsure(ctx, e.Admin, "t", raw, map[string]ttl.Strategy{"f": ttl.DefaultExpiration(time.Hour)},
				policy.Options{DryRun: true, Scan: scan.Options{Now: func() time.Time { return base }}})
			return err
		}},
	}
	t.Log("| job | rows | cells | time | peak heap | peak live heap | allocated |")
	t.Log("|---|---:|---:|---:|---:|---:|---:|")
	peaks := map[string][]uint64{}
	for _, rows := range []int{20_000, 200_000} {
		load(rows)
		for _, job := range jobs {
			var runs []testkit.Usage
			for round := 0; round < 3; round++ {
				var err error
				runs = append(runs, testkit.Measure(func() { err = job.run() }))
				if err != nil && !isDataLoss(err) {
					t.Fatal(job.name, err)
				}
			}
			m := testkit.Medians(runs)
			peaks[job.name] = append(peaks[job.name], m.Peak)
			t.Logf("| %s | %d | %d | %v | %s | %s | %s |", job.name, rows, 5*rows, m.Elapsed.Round(time.Millisecond), testkit.MiB(m.Peak), testkit.MiB(m.PeakLive), testkit.MiB(m.Allocated))
		}
	}
	for name, p := range peaks {
		t.Logf("%s: peak heap at 10× the rows ÷ at 1×: %.2f", name, float64(p[1])/float64(p[0]))
	}
}

// isDataLoss reports the refusal a dry run over expired cells returns.
func isDataLoss(err error) bool { return errors.Is(err, policy.ErrDataLoss) }

// The emulator runs in a child process (this test binary, run again as
// TestScaleEmulatorProcess), so that the heap measured is the client's
// alone: an in-process emulator would hold every cell written and dwarf
// what the client uses. (The root package's scale tests have the same
// helpers; testkit has none.)

// TestScaleEmulatorProcess is not a test: it is the emulator's child
// process (testkit.StartEmulatorChild), which serves until its standard
// input closes.
func TestScaleEmulatorProcess(t *testing.T) { testkit.EmulatorChild(t) }
