package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/internal/emulator"
)

// on starts an emulator and points the command's clients at it.
func on(t *testing.T) *emulator.Emulator {
	e := emulator.StartForTest(t)
	t.Setenv("BIGTABLE_EMULATOR_HOST", e.Addr)
	return e
}

// loadtable runs the command on the emulator's instance with args.
func loadtable(args ...string) (int, string) {
	var stderr bytes.Buffer
	code := run(append([]string{"-project", emulator.Project, "-instance", emulator.Instance}, args...), &stderr)
	return code, stderr.String()
}

// TestLoad fills a table of three batches, two cells a row, and checks
// every cell: its row and column, its value's size, and its timestamp,
// (row*cells+cell) % 72 hours before the load; so that a third of the
// cells are less than a day old.
func TestLoad(t *testing.T) {
	e := on(t)
	before := time.Now().Truncate(time.Millisecond)
	if code, stderr := loadtable("-table", "load", "-rows", "4500", "-cells", "2", "-value", "10"); code != 0 {
		t.Fatalf("exit status %d: %s", code, stderr)
	}
	after := time.Now()

	info, err := e.Admin.TableInfo(context.Background(), "load")
	if err != nil || len(info.Families) != 1 || info.Families[0] != "f" {
		t.Fatalf("table created with families %v (%v), want [f]", info, err)
	}
	rows, young := 0, 0
	err = e.Client.Open("load").ReadRows(context.Background(), bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		if want := fmt.Sprintf("row%09d", rows); r.Key() != want {
			t.Fatalf("row %d is %q, want %q", rows, r.Key(), want)
		}
		if len(r["f"]) != 2 {
			t.Fatalf("row %s has %d cells, want 2", r.Key(), len(r["f"]))
		}
		for c, item := range r["f"] {
			if item.Column != fmt.Sprint("f:c", c) || !bytes.Equal(item.Value, make([]byte, 10)) {
				t.Fatalf("row %s: cell %d is %s = %q, want f:c%d of 10 zero bytes", r.Key(), c, item.Column, item.Value, c)
			}
			age := time.Duration((rows*2+c)%72) * time.Hour
			if ts := item.Timestamp.Time(); ts.Before(before.Add(-age)) || ts.After(after.Add(-age)) {
				t.Fatalf("row %s, %s: timestamp %v, want %v before the load", r.Key(), item.Column, ts, age)
			}
			if age < 24*time.Hour {
				young++
			}
		}
		rows++
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if rows != 4500 || young != 3000 {
		t.Errorf("%d rows, %d cells less than a day old; want 4500 and 3000 (a third)", rows, young)
	}

	// Again, on the table as it is: more versions of the first rows.
	if code, stderr := loadtable("-table", "load", "-rows", "3", "-cells", "2", "-value", "10"); code != 0 {
		t.Fatalf("second load: exit status %d: %s", code, stderr)
	}
	r, err := e.Client.Open("load").ReadRow(context.Background(), "row000000002")
	if err != nil || len(r["f"]) != 4 {
		t.Errorf("row000000002 after a second load: %d cells (%v), want 4", len(r["f"]), err)
	}
}

// TestLoadFails: a failed write stops the load and is reported, whether it
// comes while batches are being handed out or after the last one.
func TestLoadFails(t *testing.T) {
	e := on(t)
	// A table of the name exists, without family f.
	e.TableForTest(t, "other", map[string]bigtable.GCPolicy{"g": nil})
	for _, rows := range []string{"10", "20000"} {
		code, stderr := loadtable("-table", "other", "-rows", rows, "-cells", "1")
		if code != 1 || !strings.HasPrefix(stderr, "loadtable: rows ") || !strings.Contains(stderr, `unknown family "f"`) {
			t.Errorf("-rows %s into a table without family f: exit status %d, %q", rows, code, stderr)
		}
	}
	r, err := e.Client.Open("other").ReadRow(context.Background(), "row000000000")
	if err != nil || len(r) != 0 {
		t.Errorf("the failed loads wrote %v (%v)", r, err)
	}
}

// TestFlags: -h prints the flags and exits 0; a bad flag exits 2, as the
// flag package does.
func TestFlags(t *testing.T) {
	if code, stderr := loadtable("-h"); code != 0 || !strings.Contains(stderr, "-rows int") {
		t.Errorf("-h: exit status %d, %q", code, stderr)
	}
	if code, stderr := loadtable("-rows", "many"); code != 2 || !strings.Contains(stderr, `invalid value "many" for flag -rows`) {
		t.Errorf("-rows many: exit status %d, %q", code, stderr)
	}
}

// TestNoEmulator: without BIGTABLE_EMULATOR_HOST the clients look for
// credentials of a real instance, and the command reports what it found.
func TestNoEmulator(t *testing.T) {
	t.Setenv("BIGTABLE_EMULATOR_HOST", "")
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", t.TempDir()+"/none.json")
	if code, stderr := loadtable("-rows", "1"); code != 1 || !strings.Contains(stderr, "none.json") {
		t.Errorf("exit status %d, %q; want 1 and the missing credentials", code, stderr)
	}
}
