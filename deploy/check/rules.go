package check

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
)

// ErrUnknownMetric reports a query of a metric the catalogue does not
// emit: a typo, a renamed instrument, or a row missing from
// docs/metrics.md.
var ErrUnknownMetric = errors.New("metric not in the catalogue")

// ErrRules reports a rules file Prometheus's own rule parser refuses.
var ErrRules = errors.New("rules")

// promql is the parser Prometheus evaluates rules with.
var promql = parser.NewParser(parser.Options{})

// Rules parses the Prometheus rules file at path with Prometheus's own
// rule parser (unknown fields refused, every expression and template
// parsed) and checks that every metric its expressions query is in cat.
// It returns the rules' alert and record names.
func Rules(path string, cat Catalogue) ([]string, error) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	groups, errs := rulefmt.ParseFile(path, false, model.UTF8Validation, promql, logger)
	if len(errs) > 0 {
		for i := range errs {
			errs[i] = fmt.Errorf("%w: %w", ErrRules, errs[i])
		}
		return nil, errors.Join(errs...)
	}
	var names []string
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			name := r.Alert + r.Record
			names = append(names, name)
			if err := queried(r.Expr, cat); err != nil {
				errs = append(errs, fmt.Errorf("%s: group %s, rule %s: %w", path, g.Name, name, err))
			}
		}
	}
	if len(names) == 0 {
		errs = append(errs, fmt.Errorf("%w: %s: no rule", ErrRules, path))
	}
	return names, errors.Join(errs...)
}

// queried parses a PromQL expression and checks that every metric it
// selects is in cat; a selector without a metric name is refused too.
func queried(expr string, cat Catalogue) error {
	e, err := promql.ParseExpr(expr)
	if err != nil {
		return fmt.Errorf("%q: %w", expr, err)
	}
	missing := map[string]bool{}
	var errs []error
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		name := vs.Name
		for _, m := range vs.LabelMatchers {
			if m.Name == model.MetricNameLabel && m.Type == labels.MatchEqual {
				name = m.Value
			}
		}
		switch {
		case name == "":
			errs = append(errs, fmt.Errorf("%s: a selector with no metric name", vs))
		case cat[name] == "":
			missing[name] = true
		}
		return nil
	})
	for _, name := range sortedKeys(missing) {
		errs = append(errs, fmt.Errorf("%w: %s (docs/metrics.md has no instrument it comes from)", ErrUnknownMetric, name))
	}
	return errors.Join(errs...)
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
