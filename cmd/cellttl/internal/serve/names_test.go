package serve

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/metric"
)

// metricsDoc is the catalogue of instruments, with the names they have in
// Prometheus in its section "Names in Prometheus".
const metricsDoc = "../../../../docs/metrics.md"

// TestDocumentedNames records every instrument of docs/metrics.md's
// catalogue, with its unit and kind, through the exporter, and checks that
// the doc's table of Prometheus names holds exactly the names exposed: the
// names alert rules and dashboards are written against.
func TestDocumentedNames(t *testing.T) {
	b, err := os.ReadFile(metricsDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	ctx := context.Background()
	m, err := NewMetrics(ctx, true, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Shutdown(ctx)
	meter := m.MeterProvider().Meter("test")
	row := regexp.MustCompile("(?m)^\\| `(cellttl\\.[a-z.]+)` \\| `([^`]+)` \\| (counter|histogram|gauge) \\|")
	var instruments []string
	for _, r := range row.FindAllStringSubmatch(doc, -1) {
		name, unit, kind := r[1], r[2], r[3]
		instruments = append(instruments, name)
		switch kind {
		case "counter":
			c, err := meter.Int64Counter(name, metric.WithUnit(unit))
			if err != nil {
				t.Fatal(err)
			}
			c.Add(ctx, 1)
		case "gauge":
			g, err := meter.Int64Gauge(name, metric.WithUnit(unit))
			if err != nil {
				t.Fatal(err)
			}
			g.Record(ctx, 1)
		default:
			h, err := meter.Float64Histogram(name, metric.WithUnit(unit))
			if err != nil {
				t.Fatal(err)
			}
			h.Record(ctx, 1)
		}
	}
	if len(instruments) < 20 {
		t.Fatalf("found %d instruments in %s: is the search broken?", len(instruments), metricsDoc)
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, MetricsPath, nil))
	exposed := map[string]string{} // family name -> TYPE
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if f := strings.Fields(line); len(f) == 4 && f[1] == "TYPE" && strings.HasPrefix(f[2], "cellttl_") {
			exposed[f[2]] = f[3]
		}
	}
	var want strings.Builder
	want.WriteString("| instrument | Prometheus series |\n|---|---|\n")
	for _, name := range instruments {
		family := ""
		for f := range exposed {
			if strings.HasPrefix(f, strings.ReplaceAll(name, ".", "_")+"_") || f == strings.ReplaceAll(name, ".", "_") {
				if family == "" || len(f) < len(family) {
					family = f
				}
			}
		}
		series := "`" + family + "`"
		if exposed[family] == "histogram" {
			series = "`" + family + "_bucket`, `_sum`, `_count`"
		}
		want.WriteString("| `" + name + "` | " + series + " |\n")
	}
	if !strings.Contains(doc, want.String()) {
		t.Errorf("%s's table of Prometheus names differs from what the exporter exposes; want:\n%s\nexposed: %v", metricsDoc, want.String(), exposed)
	}
}
