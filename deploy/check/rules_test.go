package check

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// cat is a catalogue of two instruments, for the fixtures.
var cat = Catalogue{"a_total": "a", "b_seconds_bucket": "b"}

func rulesFile(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rules.yml")
	writeFile(t, path, text)
	return path
}

func TestRulesPass(t *testing.T) {
	path := rulesFile(t, `groups:
  - name: g
    rules:
      - alert: A
        expr: increase(a_total[5m]) > 0 and on() histogram_quantile(0.99, sum by (le) (rate({__name__="b_seconds_bucket"}[5m]))) > 1
        annotations:
          summary: "{{ $labels.x }}"
      - record: job:a:rate5m
        expr: rate(a_total[5m])
`)
	names, err := Rules(path, cat)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(names, ",") != "A,job:a:rate5m" {
		t.Errorf("rules %v", names)
	}
}

// Each fault is reported naming what is at fault: a metric the catalogue
// lacks, a selector with no name, an expression or a template that does
// not parse, an unknown field, no rule.
func TestRulesRefuse(t *testing.T) {
	for _, tc := range []struct {
		name, rules string
		is          error
		want        []string
	}{
		{"unknown metric", "groups:\n- name: g\n  rules:\n  - alert: A\n    expr: c_total > 0 or a_total > 0 or c_total < 0\n",
			ErrUnknownMetric, []string{"rule A", "c_total"}},
		{"no name", "groups:\n- name: g\n  rules:\n  - alert: A\n    expr: '{job=\"x\"} > 0'\n",
			nil, []string{"rule A", "no metric name"}},
		{"bad expression", "groups:\n- name: g\n  rules:\n  - alert: A\n    expr: rate(a_total) >\n",
			ErrRules, []string{"could not parse expression"}},
		{"bad template", "groups:\n- name: g\n  rules:\n  - alert: A\n    expr: a_total > 0\n    annotations:\n      s: '{{ .Nope'\n",
			ErrRules, []string{"annotation"}},
		{"unknown field", "groups:\n- name: g\n  rules:\n  - alert: A\n    expr: a_total > 0\n    severity: page\n",
			ErrRules, []string{"severity"}},
		{"no rule", "groups: []\n", ErrRules, []string{"no rule"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Rules(rulesFile(t, tc.rules), cat)
			wantErr(t, err, tc.want...)
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v: want %v", err, tc.is)
			}
		})
	}
	if _, err := Rules(filepath.Join(t.TempDir(), "none.yml"), cat); err == nil {
		t.Error("a missing file: no error")
	}
}

// The repository's rules query only the catalogue's metrics, once the
// lease's rows are in it.
func TestRulesOfTheRepository(t *testing.T) {
	root := fakeRoot(t, true)
	md := readCatalogue(t, root)
	names, err := Rules(filepath.Join(root, "deploy/prometheus/alerts.yml"), md)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) < 5 {
		t.Errorf("rules %v: want the five alerts of issue 32 at least", names)
	}
}

func readCatalogue(t *testing.T, root string) Catalogue {
	t.Helper()
	md, err := ParseCatalogue(mustRead(t, filepath.Join(root, "docs/metrics.md")))
	if err != nil {
		t.Fatal(err)
	}
	return md
}
