package testkit_test

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/internal/testkit"
)

// TestMeasure: a job that holds a large allocation live is measured with
// at least that much peak heap and allocation, and its time.
func TestMeasure(t *testing.T) {
	var keep []byte
	u := testkit.Measure(func() {
		keep = make([]byte, 64<<20)
		for i := range keep {
			keep[i] = 1
		}
		time.Sleep(5 * time.Millisecond) // let the sampler see it: this test measures time
	})
	// The peak is measured above the heap in use at the start, some of
	// which the process's other goroutines (the emulator's) may free while
	// the job runs: allow them 4 MiB of it.
	if u.Peak < 60<<20 || u.Allocated < 64<<20 || u.Elapsed < 5*time.Millisecond {
		t.Errorf("%+v: want a peak of at least 60 MiB, an allocation of at least 64 MiB, and 5ms", u)
	}
	_ = keep
	med := testkit.Medians([]testkit.Usage{{Elapsed: 3, Peak: 1, Input: 9}, {Elapsed: 1, Peak: 3, Input: 8}, {Elapsed: 2, Peak: 2, Input: 7}})
	if med != (testkit.Usage{Elapsed: 2, Peak: 2, Input: 8}) {
		t.Errorf("Medians = %+v", med)
	}
	if got := testkit.MiB(3 << 19); got != "1.5 MiB" {
		t.Errorf("MiB = %q", got)
	}
}

// TestEmulatorChildProcess is the child of TestStartEmulatorChild.
func TestEmulatorChildProcess(t *testing.T) { testkit.EmulatorChild(t) }

// TestStartEmulatorChild starts the emulator in a child process, writes
// and reads a cell there, and stops it.
func TestStartEmulatorChild(t *testing.T) {
	e, stop := testkit.StartEmulatorChild(t, "TestEmulatorChildProcess")
	raw := e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": nil})
	testkit.Put(t, raw, "f", testkit.Stored{Row: "r", Column: "c", TS: 1000})
	if got := testkit.Values(testkit.RawRow(t, raw, "r")); len(got) != 1 || got[0] != "f:c=v" {
		t.Errorf("read back %v", got)
	}
	stop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := raw.ReadRow(ctx, "r"); err == nil {
		t.Error("the child still serves after stop")
	}
}
