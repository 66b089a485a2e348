package launchtest

import (
	"context"
	"os"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
)

// TestEmulator: the table holds the cells asked for, and clients find the
// emulator through the environment.
func TestEmulator(t *testing.T) {
	at := time.Date(2030, 4, 30, 8, 0, 0, 0, time.UTC)
	tbl := Emulator(t, map[string]time.Time{"r1": at, "r2": at.Add(time.Hour)})
	if os.Getenv("BIGTABLE_EMULATOR_HOST") == "" {
		t.Fatal("BIGTABLE_EMULATOR_HOST not set")
	}
	got := map[string]bigtable.Timestamp{}
	err := tbl.ReadRows(context.Background(), bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		for _, it := range r["sess"] {
			got[r.Key()] = it.Timestamp
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bigtable.Timestamp{"r1": bigtable.Time(at), "r2": bigtable.Time(at.Add(time.Hour))}
	if len(got) != 2 || got["r1"] != want["r1"] || got["r2"] != want["r2"] {
		t.Errorf("cells %v, want %v", got, want)
	}
}

// fatal records a test's failure instead of ending it.
type fatal struct {
	testing.TB
	got []any
}

func (f *fatal) Helper()           {}
func (f *fatal) Fatal(args ...any) { f.got = args }

// TestMust: an error fails the test with it; nil does nothing.
func TestMust(t *testing.T) {
	f := &fatal{TB: t}
	must(f, nil)
	if f.got != nil {
		t.Errorf("must(nil) failed the test: %v", f.got)
	}
	err := os.ErrNotExist
	must(f, err)
	if len(f.got) != 1 || f.got[0] != err {
		t.Errorf("must(err) failed the test with %v, want %v", f.got, err)
	}
}
