package audit_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/audit"
	"github.com/cellttl/ttl/scan"
)

// jsonReport is a report of one family holding a cell that expires in
// two hours and one expired two hours ago, collectable now (maxage=1h).
func jsonReport(t *testing.T) *audit.Report {
	t.Helper()
	r, err := audit.NewReport("t", base, map[string]ttl.Strategy{"f": ttl.DefaultExpiration(time.Hour)},
		map[string]bigtable.GCPolicy{"f": bigtable.MaxAgePolicy(time.Hour)}, false)
	if err != nil {
		t.Fatal(err)
	}
	r.AddRow(row("r", cell{"f:a", span(time.Hour)}, cell{"f:a", span(-2 * time.Hour)}))
	return r
}

// TestReportJSON reproduces the JSON part of finding 4 of issue 21: open
// bucket bounds printed as 0001-01-01T00:00:00Z, and every empty bucket
// (22 a family) printed. Encoded, a report lists its non-empty buckets
// with their bounds only; with AllBuckets every bucket, open ends still
// without a bound; decoded, it is the report encoded.
func TestReportJSON(t *testing.T) {
	r := jsonReport(t)
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "0001-01-01") {
		t.Errorf("a zero time in the JSON: %s", b)
	}
	var doc struct {
		Families []struct {
			Expiring, Collectable []map[string]any
		}
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	f := doc.Families[0]
	if len(f.Expiring) != 1 || len(f.Collectable) != 1 {
		t.Fatalf("%d expiring and %d collectable buckets, want the one non-empty of each: %s", len(f.Expiring), len(f.Collectable), b)
	}
	if got := f.Expiring[0]; got["from"] != "2030-04-30T10:00:00Z" || got["until"] != "2030-05-01T09:00:00Z" || got["cells"] != 1.0 {
		t.Errorf("expiring bucket %v, want [1h, 1d) from base holding 1 cell", got)
	}

	// Every bucket, on request: the open ends have no bound.
	r.AllBuckets = true
	if b, err = json.Marshal(r); err != nil {
		t.Fatal(err)
	}
	doc.Families = nil // decode afresh, not into the maps above
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	f = doc.Families[0]
	if len(f.Expiring) != 11 || len(f.Collectable) != 11 || strings.Contains(string(b), "0001-01-01") {
		t.Fatalf("AllBuckets: %d and %d buckets, want 11 each, no zero time: %s", len(f.Expiring), len(f.Collectable), b)
	}
	first, last := f.Expiring[0], f.Expiring[10]
	if _, ok := first["from"]; ok || first["until"] == nil {
		t.Errorf("first bucket %v, want an until and no from", first)
	}
	if _, ok := last["until"]; ok || last["from"] == nil {
		t.Errorf("last bucket %v, want a from and no until", last)
	}

	// Decoded, with or without its empty buckets, it is the report.
	r.AllBuckets = false
	for _, all := range []bool{false, true} {
		r.AllBuckets = all
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		back := new(audit.Report)
		if err := json.Unmarshal(b, back); err != nil {
			t.Fatal(err)
		}
		if got, want := familiesJSON(t, back), familiesJSON(t, r); got != want {
			t.Errorf("AllBuckets %v: decoded\n%s\nwant\n%s", all, got, want)
		}
		if len(back.Families[0].Expiring) != 11 || back.AllBuckets {
			t.Errorf("AllBuckets %v: decoded %d buckets (all: %v), want the full histogram", all, len(back.Families[0].Expiring), back.AllBuckets)
		}
	}
}

// TestReportJSONRefused checks that a bucket whose bounds are not the
// report's is refused, decoded or merged, and a refused merge changes
// nothing; JSON that is not a report is refused too.
func TestReportJSONRefused(t *testing.T) {
	odd := `{"table":"t","now":"2030-04-30T09:00:00Z","families":[{"family":"f","%s":[{"from":"2030-04-30T09:30:00Z","cells":1,"bytes":1}]}]}`
	for _, h := range []string{"expiring", "collectable"} {
		var r audit.Report
		if err := json.Unmarshal([]byte(strings.Replace(odd, "%s", h, 1)), &r); err == nil || !strings.Contains(err.Error(), `family "f": a bucket from`) {
			t.Errorf("%s: a bucket off the edges decoded: %v", h, err)
		}
	}
	var r audit.Report
	if err := json.Unmarshal([]byte(`{"families": 3}`), &r); err == nil {
		t.Error("a report with families 3 decoded")
	}

	sum := jsonReport(t)
	before := familiesJSON(t, sum)
	for _, o := range []audit.Family{
		{Family: "f", Live: scan.Count{Cells: 1, Bytes: 1}, Expiring: []audit.Bucket{{From: base.Add(time.Minute), Count: scan.Count{Cells: 1, Bytes: 1}}}},
		{Family: "g", Live: scan.Count{Cells: 1, Bytes: 1}, Collectable: []audit.Bucket{{Until: base.Add(-time.Minute), Count: scan.Count{Cells: 1, Bytes: 1}}}},
	} {
		err := sum.Merge(&audit.Report{Table: "t", Now: base, Families: []audit.Family{o}})
		if !errors.Is(err, ttl.ErrInvalidOption) || !strings.Contains(err.Error(), "is not one of the report's") {
			t.Errorf("merge of %+v: %v, want ErrInvalidOption", o, err)
		}
	}
	if familiesJSON(t, sum) != before {
		t.Error("a refused merge changed the report")
	}
}
