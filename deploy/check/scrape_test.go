package check

import (
	"errors"
	"path/filepath"
	"testing"
)

func TestScrapeOfTheRepository(t *testing.T) {
	if err := Scrape(filepath.Join(repo, "deploy/prometheus/scrape.yml"), "cellttl-sweep", "metrics", "alerts.yml"); err != nil {
		t.Fatal(err)
	}
}

func TestScrapeRefuses(t *testing.T) {
	src := filepath.Join(repo, "deploy/prometheus/scrape.yml")
	for _, tc := range []struct{ name, old, new, want string }{
		{"unknown field", "scrape_interval: 15s", "scrape_intervals: 15s", "scrape_intervals"},
		{"other pods", "regex: cellttl-sweep", "regex: other", "no job keeps the pods"},
		{"other port", "regex: metrics", "regex: http", "no job keeps the pods"},
		{"other path", "metrics_path: /metrics", "metrics_path: /m", "no job keeps the pods"},
		{"no rules", "  - alerts.yml", "  - other.yml", "rule_files does not list alerts.yml"},
		{"bad interval", "scrape_interval: 15s", "scrape_interval: 15x", "scrape_interval"},
		{"bad regex", "regex: metrics", "regex: \"(\"", "regex"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "scrape.yml")
			copyFile(t, src, path, tc.old, tc.new)
			err := Scrape(path, "cellttl-sweep", "metrics", "alerts.yml")
			if !errors.Is(err, ErrScrape) {
				t.Errorf("error %v, want ErrScrape", err)
			}
			wantErr(t, err, tc.want)
		})
	}
	if err := Scrape(filepath.Join(t.TempDir(), "none.yml"), "a", "b", "c"); err == nil {
		t.Error("a missing file: no error")
	}
}
