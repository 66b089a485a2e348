package ttl_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
)

// ExampleTable_ApplyRow writes a session's token and its refresh token,
// each with its own lifetime, built as they are written: no recipe.
func ExampleTable_ApplyRow() {
	raw, stop := exampleTable("sess")
	defer stop()
	now := time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)
	tbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{"sess": ttl.OneSecond()},
		ttl.WithClock(func() time.Time { return now }))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	err = tbl.ApplyRow(ctx, "user#42", func(r ttl.RowWriter) {
		r.Set("sess", "token", []byte("t-1"), ttl.For(15*time.Minute))
		r.Set("sess", "refresh", []byte("r-1"), ttl.For(30*24*time.Hour))
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, at := range []time.Duration{0, 20 * time.Minute} {
		now = time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC).Add(at)
		row, err := tbl.ReadRow(ctx, "user#42")
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("after %v:\n", at)
		printRow(row)
	}
	// Output:
	// after 0s:
	//   sess:refresh = r-1
	//   sess:token = t-1
	// after 20m0s:
	//   sess:refresh = r-1
}

// ExampleTable_ApplyBatch writes rows in a loop, each built as it is
// written; an invalid row is reported at its index and not sent.
func ExampleTable_ApplyBatch() {
	raw, stop := exampleTable("events")
	defer stop()
	now := time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)
	tbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{"events": ttl.OneSecond()},
		ttl.WithClock(func() time.Time { return now }))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	retention := map[string]time.Duration{"click": 24 * time.Hour, "purchase": 90 * 24 * time.Hour, "bogus": -time.Hour}
	kinds := []string{"click", "purchase", "bogus"}
	rows := make([]string, len(kinds))
	for i, kind := range kinds {
		rows[i] = "event#" + kind
	}
	errs, err := tbl.ApplyBatch(ctx, rows, func(i int, w ttl.RowWriter) {
		w.Set("events", "kind", []byte(kinds[i]), ttl.For(retention[kinds[i]]))
	})
	if err != nil {
		log.Fatal(err)
	}
	for i, kind := range kinds {
		if errs != nil && errs[i] != nil {
			fmt.Printf("%s: %v\n", kind, errs[i])
		}
	}
	err = tbl.ReadRows(ctx, bigtable.PrefixRange("event#"), func(r bigtable.Row) bool {
		fmt.Println(r.Key())
		return true
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// bogus: ttl: cell would be born expired: For(-1h0m0s) under OneSecond() expires at 2030-04-30T08:00:00Z, not after now (2030-04-30T09:00:00Z) (family "events", column "kind")
	// event#click
	// event#purchase
}
