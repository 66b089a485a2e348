package check

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// ErrDashboard reports a Grafana dashboard that is not what the check
// reads: not JSON, no title or uid, or a panel with no query.
var ErrDashboard = errors.New("dashboard")

// panel is the part of a Grafana panel the check reads.
type panel struct {
	Title   string   `json:"title"`
	Type    string   `json:"type"`
	Targets []target `json:"targets"`
	Panels  []panel  `json:"panels"`
}

type target struct {
	Expr  string `json:"expr"`
	RefID string `json:"refId"`
}

type dashboard struct {
	UID        string  `json:"uid"`
	Title      string  `json:"title"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string          `json:"name"`
			Type  string          `json:"type"`
			Query json.RawMessage `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

// grafanaRanges are Grafana's range variables, which PromQL cannot parse:
// each is replaced by a duration before parsing.
var grafanaRanges = regexp.MustCompile(`\$\{?__(rate_interval|interval|range)\}?`)

// labelValues is the template variable query label_values(METRIC, LABEL).
var labelValues = regexp.MustCompile(`^\s*label_values\(\s*(.+?)\s*,\s*[A-Za-z_][A-Za-z0-9_]*\s*\)\s*$`)

// Dashboard reads the Grafana dashboard JSON at path and checks that every
// panel's queries (rows' panels included) parse as PromQL, with Grafana's
// range variables taken as 5m, and query only metrics in cat, and that
// every label_values template variable names one. It returns the titles
// of the panels that query.
func Dashboard(path string, cat Catalogue) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrDashboard, path, err)
	}
	var errs []error
	if d.UID == "" || d.Title == "" {
		errs = append(errs, fmt.Errorf("%w: %s: no uid or title", ErrDashboard, path))
	}
	var titles []string
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			walk(p.Panels)
			if p.Type == "row" || p.Type == "text" {
				continue
			}
			if len(p.Targets) == 0 {
				errs = append(errs, fmt.Errorf("%w: %s: panel %q has no query", ErrDashboard, path, p.Title))
				continue
			}
			titles = append(titles, p.Title)
			for _, t := range p.Targets {
				expr := grafanaRanges.ReplaceAllString(t.Expr, "5m")
				if err := queried(expr, cat); err != nil {
					errs = append(errs, fmt.Errorf("%s: panel %q, query %s: %w", path, p.Title, t.RefID, err))
				}
			}
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q string
		if json.Unmarshal(v.Query, &q) != nil {
			var obj struct {
				Query string `json:"query"`
			}
			_ = json.Unmarshal(v.Query, &obj)
			q = obj.Query
		}
		m := labelValues.FindStringSubmatch(q)
		if m == nil {
			errs = append(errs, fmt.Errorf("%w: %s: variable %s: query %q is not label_values(METRIC, LABEL)", ErrDashboard, path, v.Name, q))
			continue
		}
		if err := queried(strings.TrimSpace(m[1]), cat); err != nil {
			errs = append(errs, fmt.Errorf("%s: variable %s: %w", path, v.Name, err))
		}
	}
	return titles, errors.Join(errs...)
}
