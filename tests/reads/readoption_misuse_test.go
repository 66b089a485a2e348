package reads_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/testkit"
)

// ttl.ReadOption is bigtable.ReadOption, so a ttl read option compiles
// where a bigtable.Table wants one. These tests pin what it then does: the
// options a bigtable.Table cannot honour fail its read, loudly and by
// name; RowFilter is a plain bigtable.RowFilter, as documented.

// TestReadOptionMisuseFails passes KeepAlive and WithWriteTimes to a raw
// bigtable.Table's ReadRow and ReadRows: the read must fail with
// InvalidArgument and a message naming the option, where it used to
// succeed without renewals or write times.
func TestReadOptionMisuseFails(t *testing.T) {
	ctx := context.Background()
	clock := testkit.NewClock(testkit.Base)
	tbl, raw := testkit.NewTable(t, clock, map[string]ttl.Strategy{"f": ttl.OneSecond()}, nil, ttl.RecordWriteTime())
	// The emulator checks a value pattern only against the cells it
	// reads, so the rows read hold one.
	for _, row := range []string{"r0", "r1"} {
		if err := tbl.Apply(ctx, row, testkit.Set("f", "c", "v", ttl.For(time.Hour))); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string // what the message must name
		opt  ttl.ReadOption
	}{
		{"ttl.KeepAlive", ttl.KeepAlive(time.Minute)},
		{"ttl.WithWriteTimes", ttl.WithWriteTimes()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := raw.ReadRow(ctx, "r0", tc.opt)
			checkMisuse(t, "ReadRow", tc.name, err)
			if r != nil {
				t.Errorf("raw ReadRow with %s returned %v, want no row", tc.name, testkit.Values(r))
			}

			var got []string
			err = raw.ReadRows(ctx, bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
				got = append(got, r.Key())
				return true
			}, bigtable.LimitRows(5), tc.opt)
			checkMisuse(t, "ReadRows", tc.name, err)
			if len(got) != 0 {
				t.Errorf("raw ReadRows with %s delivered rows %v, want none", tc.name, got)
			}

			// The same option through the ttl.Table is recognised and
			// stripped: the read succeeds and returns the live cell.
			r, err = tbl.ReadRow(ctx, "r0", tc.opt)
			if err != nil {
				t.Fatalf("ttl.Table.ReadRow with %s: %v", tc.name, err)
			}
			if got, want := testkit.Values(r), []string{"f:c=v"}; !slices.Equal(got, want) {
				t.Errorf("ttl.Table.ReadRow with %s = %v, want %v", tc.name, got, want)
			}
		})
	}
}

// checkMisuse asserts that err is the server's InvalidArgument and that
// its message names the option.
func checkMisuse(t *testing.T, call, name string, err error) {
	t.Helper()
	if err == nil {
		t.Fatalf("raw %s with %s succeeded; want it to fail", call, name)
	}
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("raw %s with %s: code %v, want InvalidArgument (%v)", call, name, status.Code(err), err)
	}
	if !strings.Contains(err.Error(), name+" is a ttl.Table read option") {
		t.Errorf("raw %s with %s: %q does not name the mistake", call, name, err)
	}
}

// TestRowFilterOnRawTable passes ttl.RowFilter to a raw bigtable.Table:
// it is a plain bigtable.RowFilter, with no expiry filtering, as its doc
// comment says.
func TestRowFilterOnRawTable(t *testing.T) {
	ctx := context.Background()
	clock := testkit.NewClock(testkit.Base)
	tbl, raw := testkit.NewTable(t, clock, map[string]ttl.Strategy{"f": ttl.OneSecond()}, nil)
	if err := tbl.Apply(ctx, "r0", testkit.Set("f", "a", "live", ttl.For(time.Hour))); err != nil {
		t.Fatal(err)
	}
	m := bigtable.NewMutation()
	m.Set("f", "a", testkit.MS(testkit.Base), []byte("expired")) // expires at base
	m.Set("f", "b", testkit.MS(testkit.Base.Add(time.Hour)), []byte("other"))
	if err := raw.Apply(ctx, "r0", m); err != nil {
		t.Fatal(err)
	}
	f := bigtable.ColumnFilter("a")

	r, err := raw.ReadRow(ctx, "r0", ttl.RowFilter(f))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := testkit.Values(r), []string{"f:a=live", "f:a=expired"}; !slices.Equal(got, want) {
		t.Errorf("raw ReadRow with ttl.RowFilter = %v, want %v: column a, expired cell too", got, want)
	}

	var rows [][]string
	err = raw.ReadRows(ctx, bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		rows = append(rows, testkit.Values(r))
		return true
	}, ttl.RowFilter(f))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || !slices.Equal(rows[0], []string{"f:a=live", "f:a=expired"}) {
		t.Errorf("raw ReadRows with ttl.RowFilter = %v, want one row of column a's two cells", rows)
	}

	// Through the ttl.Table the same option follows the expiry filter.
	r, err = tbl.ReadRow(ctx, "r0", ttl.RowFilter(f))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := testkit.Values(r), []string{"f:a=live"}; !slices.Equal(got, want) {
		t.Errorf("ttl.Table.ReadRow with ttl.RowFilter = %v, want %v", got, want)
	}
}
