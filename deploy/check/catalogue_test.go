package check

import (
	"errors"
	"os"
	"testing"
)

// The repository's catalogue gives each instrument the names
// OpenTelemetry's Prometheus exporter writes.
func TestCatalogueOfTheRepository(t *testing.T) {
	md, err := os.ReadFile(repo + "/docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	cat, err := ParseCatalogue(md)
	if err != nil {
		t.Fatal(err)
	}
	for name, inst := range map[string]string{
		"cellttl_sweep_rounds_total":                  "cellttl.sweep.rounds",
		"cellttl_sweep_delivery_delay_seconds_bucket": "cellttl.sweep.delivery.delay",
		"cellttl_sweep_delivery_delay_seconds_sum":    "cellttl.sweep.delivery.delay",
		"cellttl_sweep_delivery_delay_seconds_count":  "cellttl.sweep.delivery.delay",
		"cellttl_scan_bytes_returned_bytes_total":     "cellttl.scan.bytes.returned",
		"cellttl_scan_rows_seen_total":                "cellttl.scan.rows.seen",
		"cellttl_core_renewals_lost_total":            "cellttl.core.renewals.lost",
	} {
		if cat[name] != inst {
			t.Errorf("%s: from %q, want %q", name, cat[name], inst)
		}
	}
	if _, ok := cat["cellttl_sweep_delivery_delay_seconds"]; ok {
		t.Error("a histogram's bare name is in the catalogue: Prometheus has only its _bucket, _sum and _count")
	}
	if names := cat.Names(); len(names) != len(cat) || names[0] > names[len(names)-1] {
		t.Errorf("Names: %v", names)
	}
}

func TestCatalogueKinds(t *testing.T) {
	md := "| kind | instrument | unit |\n|---|---|---|\n" +
		"| gauge | `a.held` | `{lease}` |\n" +
		"| updowncounter | `a.queue` | `By` |\n" +
		"| counter | `a.time` | `ms` |\n" +
		"| histogram | `a.fill` | `1` |\n" +
		"| counter | `a.seconds` | `s` |\n" +
		"| counter | | `s` |\n" +
		"\n| not | a table |\n|---|---|\n| `x.y` | z |\n"
	cat, err := ParseCatalogue([]byte(md))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a_fill_ratio_bucket", "a_fill_ratio_count", "a_fill_ratio_sum", "a_held", "a_queue_bytes", "a_seconds_total", "a_time_milliseconds_total"}
	if got := cat.Names(); len(got) != len(want) {
		t.Fatalf("names %v, want %v", got, want)
	}
	for i, n := range cat.Names() {
		if n != want[i] {
			t.Errorf("name %d: %s, want %s", i, n, want[i])
		}
	}
}

// A unit or kind with no known translation, or no table at all, is
// refused naming the instrument.
func TestCatalogueRefuses(t *testing.T) {
	for _, tc := range []struct{ md, want string }{
		{"| instrument | unit | kind |\n|---|---|---|\n| `a.b` | `min` | counter |\n", `instrument a.b: unit "min"`},
		{"| instrument | unit | kind |\n|---|---|---|\n| `a.b` | `s` | summary |\n", `instrument a.b: kind "summary"`},
		{"no tables here\n", "no instrument table"},
	} {
		_, err := ParseCatalogue([]byte(tc.md))
		if !errors.Is(err, ErrCatalogue) {
			t.Errorf("%q: error %v, want ErrCatalogue", tc.md, err)
		}
		wantErr(t, err, tc.want)
	}
}
