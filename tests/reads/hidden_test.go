package reads_test

import (
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
)

// offline is a table no test reads from: Hidden reads nothing.
type offline struct{ bigtable.TableAPI }

// TestHidden asks why the table hides each kind of stored cell, and that
// it hides no live one.
func TestHidden(t *testing.T) {
	now := time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)
	tbl, err := ttl.NewTable(offline{}, map[string]ttl.Strategy{
		"sess": ttl.OneSecond(), "rev": ttl.SequenceNumbers(2),
	}, ttl.WithReadMargin(time.Minute), ttl.OtherFamilies("meta"), ttl.RecordWriteTime())
	if err != nil {
		t.Fatal(err)
	}
	at := func(d time.Duration) bigtable.Timestamp { return bigtable.Time(now.Add(d)).TruncateToMilliseconds() }
	for _, tt := range []struct {
		column string
		ts     bigtable.Timestamp
		newer  int
		want   string
	}{
		{"sess:a", at(-time.Second), 0, "expired"},
		{"sess:a", at(30 * time.Second), 0, "within the read margin"},
		{"sess:a", at(time.Hour), 0, ""},
		{"sess:a", ttl.MaxTimestamp, 0, ""},
		{"sess:" + ttl.WriteTimePrefix + "a", at(time.Hour), 0, "write-time companion"},
		{"rev:v", 1000, 1, ""},
		{"rev:v", 1000, 2, "superseded"},
		{"meta:m", at(-time.Hour), 5, ""},
		{"junk:j", at(time.Hour), 0, "family not declared"},
	} {
		if got := tbl.Hidden(bigtable.ReadItem{Column: tt.column, Timestamp: tt.ts}, tt.newer, now); got != tt.want {
			t.Errorf("Hidden(%q at %d, %d newer) = %q, want %q", tt.column, tt.ts, tt.newer, got, tt.want)
		}
	}
	open, err := ttl.NewTable(offline{}, map[string]ttl.Strategy{"sess": ttl.OneSecond()})
	if err != nil {
		t.Fatal(err)
	}
	if got := open.Hidden(bigtable.ReadItem{Column: "junk:j"}, 0, now); got != "" {
		t.Errorf("without OtherFamilies a family without a strategy is hidden: %q", got)
	}
	var none *ttl.Table
	if got := none.Hidden(bigtable.ReadItem{Column: "sess:a"}, 0, now); got != "" {
		t.Errorf("a nil Table hides: %q", got)
	}
}
