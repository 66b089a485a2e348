package meters_test

import (
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/cellttl/ttl/internal/meters"
)

// docRows reads docs/metrics.md's tables of instruments: for each row,
// "meter name unit kind", the meter the one its section names
// ("meter `…`"), in the order the guide lists them; and the meaning
// column of each row by name.
func docRows(t *testing.T) (rows []string, meaning map[string]string) {
	t.Helper()
	guide, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	meaning = map[string]string{}
	meter, prose := "", ""
	for _, line := range strings.Split(string(guide), "\n") {
		if strings.HasPrefix(line, "## ") {
			meter, prose = "", ""
		}
		prose += line + " " // the meter's name may follow on the next line
		if _, after, ok := strings.Cut(prose, "meter `"); ok && meter == "" {
			meter, _, _ = strings.Cut(after, "`")
		}
		if !strings.HasPrefix(line, "| `cellttl.") || meter == "" {
			continue // only a meter's section lists its instruments
		}
		cells := strings.Split(line, " | ")
		if len(cells) < 4 {
			t.Fatalf("docs/metrics.md: a row of too few columns: %s", line)
		}
		name, unit := strings.Trim(cells[0], "| `"), strings.Trim(cells[1], "`")
		rows = append(rows, strings.Join([]string{meter, name, unit, cells[2]}, " "))
		meaning[name] = cells[3]
	}
	return rows, meaning
}

// TestCatalogueIsTheGuide checks that docs/metrics.md lists exactly the
// catalogue's instruments, in its order, each under its meter's section
// with its unit and kind, and a histogram with its buckets.
func TestCatalogueIsTheGuide(t *testing.T) {
	rows, meaning := docRows(t)
	var want []string
	for _, in := range meters.Catalogue() {
		want = append(want, strings.Join([]string{in.Meter, in.Name, in.Unit, in.Kind}, " "))
		if in.Kind != meters.Histogram {
			continue
		}
		buckets := strings.Trim(strings.ReplaceAll(fmt.Sprint(in.Bounds), " ", ", "), "[]")
		if !strings.Contains(meaning[in.Name], "buckets "+buckets+" "+in.Unit) {
			t.Errorf("docs/metrics.md: %s's buckets are not %s %s: %s", in.Name, buckets, in.Unit, meaning[in.Name])
		}
	}
	if !slices.Equal(rows, want) {
		t.Errorf("docs/metrics.md lists\n%s\nthe catalogue\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
}

// TestCatalogue checks the catalogue's rules: names cellttl.<area>.<what>
// with the area its meter's package (core for the root), each once, in
// one of the four meters, of a known kind, with a unit and a
// description, and bucket bounds for a histogram only.
func TestCatalogue(t *testing.T) {
	cat := meters.Catalogue()
	if len(cat) == 0 {
		t.Fatal("an empty catalogue")
	}
	seen := map[string]bool{}
	for _, in := range cat {
		area := map[string]string{meters.Core: "core", meters.Scan: "scan", meters.Move: "move", meters.Sweep: "sweep"}[in.Meter]
		if area == "" || path.Base(in.Meter) != map[bool]string{true: "ttl", false: area}[area == "core"] {
			t.Errorf("%s: meter %q", in.Name, in.Meter)
		}
		if !strings.HasPrefix(in.Name, "cellttl."+area+".") || seen[in.Name] {
			t.Errorf("%s: not cellttl.%s.<what>, or declared twice", in.Name, area)
		}
		seen[in.Name] = true
		if in.Unit == "" || in.Description == "" || (in.Kind != meters.Counter && in.Kind != meters.Histogram && in.Kind != meters.Gauge) ||
			(len(in.Bounds) > 0) != (in.Kind == meters.Histogram) {
			t.Errorf("%s: unit %q, kind %q, bounds %v, description %q", in.Name, in.Unit, in.Kind, in.Bounds, in.Description)
		}
	}
	cat[0].Name = "changed"
	if meters.Catalogue()[0].Name == "changed" {
		t.Error("Catalogue returns the catalogue itself: a caller can change it")
	}
}
