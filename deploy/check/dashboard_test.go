package check

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func dashFile(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "d.json")
	writeFile(t, path, text)
	return path
}

func TestDashboardPass(t *testing.T) {
	path := dashFile(t, `{"uid": "u", "title": "t",
 "templating": {"list": [
   {"name": "ds", "type": "datasource", "query": "prometheus"},
   {"name": "x", "type": "query", "query": "label_values(a_total, x)"},
   {"name": "y", "type": "query", "query": {"query": "label_values(b_seconds_bucket, y)"}}]},
 "panels": [
   {"type": "text", "title": "notes"},
   {"type": "row", "title": "r", "panels": [
     {"type": "timeseries", "title": "inner", "targets": [{"refId": "A", "expr": "rate(a_total{x=~\"$x\"}[$__rate_interval])"}]}]},
   {"type": "timeseries", "title": "outer", "targets": [{"refId": "A", "expr": "sum(rate(b_seconds_bucket[${__interval}]))"}]}]}`)
	titles, err := Dashboard(path, cat)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(titles, ",") != "inner,outer" {
		t.Errorf("panels %v", titles)
	}
}

func TestDashboardRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, json string
		is         error
		want       []string
	}{
		{"unknown metric in a row's panel", `{"uid": "u", "title": "t", "panels": [{"type": "row", "panels": [
			{"title": "p", "targets": [{"refId": "B", "expr": "rate(c_total[5m])"}]}]}]}`, ErrUnknownMetric, []string{`panel "p", query B`, "c_total"}},
		{"no query", `{"uid": "u", "title": "t", "panels": [{"title": "p", "type": "stat"}]}`, ErrDashboard, []string{`panel "p" has no query`}},
		{"bad expression", `{"uid": "u", "title": "t", "panels": [{"title": "p", "targets": [{"expr": "rate(a_total[$window])"}]}]}`, nil, []string{`panel "p"`}},
		{"variable of an unknown metric", `{"uid": "u", "title": "t", "templating": {"list": [{"name": "v", "type": "query", "query": "label_values(c_total, x)"}]}}`,
			ErrUnknownMetric, []string{"variable v", "c_total"}},
		{"variable not label_values", `{"uid": "u", "title": "t", "templating": {"list": [{"name": "v", "type": "query", "query": "query_result(a_total)"}]}}`,
			ErrDashboard, []string{"variable v"}},
		{"no uid", `{"title": "t"}`, ErrDashboard, []string{"no uid"}},
		{"not JSON", `{"uid": `, ErrDashboard, []string{"d.json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Dashboard(dashFile(t, tc.json), cat)
			wantErr(t, err, tc.want...)
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v: want %v", err, tc.is)
			}
		})
	}
	if _, err := Dashboard(filepath.Join(t.TempDir(), "none.json"), cat); err == nil {
		t.Error("a missing file: no error")
	}
}

// The repository's dashboard has a panel for each thing issue 32 lists,
// and queries only the catalogue's metrics once the lease's rows are in.
func TestDashboardOfTheRepository(t *testing.T) {
	root := fakeRoot(t, true)
	titles, err := Dashboard(filepath.Join(root, "deploy/grafana/sweep.json"), readCatalogue(t, root))
	if err != nil {
		t.Fatal(err)
	}
	all := strings.ToLower(strings.Join(titles, "|"))
	for _, want := range []string{"rounds by outcome", "events", "delay", "deleted", "missed", "unscheduled", "lease holder", "scan rows"} {
		if !strings.Contains(all, want) {
			t.Errorf("no panel about %q among %v", want, titles)
		}
	}
	// Without them, the check names the lease's metrics, and only those.
	md := readCatalogue(t, root)
	for n := range md {
		if strings.HasPrefix(n, "cellttl_sweep_lease_") {
			delete(md, n)
		}
	}
	_, err = Dashboard(filepath.Join(root, "deploy/grafana/sweep.json"), md)
	wantErr(t, err, "cellttl_sweep_lease_held", "cellttl_sweep_lease_acquired_total", "cellttl_sweep_lease_lost_total")
	for _, line := range strings.Split(err.Error(), "\n") {
		if !strings.Contains(line, "cellttl_sweep_lease_") {
			t.Errorf("a fault other than the lease's metrics: %s", line)
		}
	}
}
