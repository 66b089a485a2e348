package check

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"

	"github.com/prometheus/prometheus/config"
	_ "github.com/prometheus/prometheus/discovery/kubernetes" // kubernetes_sd_configs
)

// ErrScrape reports a Prometheus configuration Prometheus refuses, or one
// that would not scrape the sweeper's pods.
var ErrScrape = errors.New("scrape config")

// Scrape loads the Prometheus configuration at path with Prometheus's own
// loader (unknown fields refused) and checks that a job scrapes /metrics
// of the pods labelled app.kubernetes.io/name=name on the port named
// port, and that rule_files lists rules, the base name of the rules file.
func Scrape(path, name, port, rules string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	cfg, err := config.Load(string(b), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrScrape, path, err)
	}
	var errs []error
	found := false
	for _, sc := range cfg.ScrapeConfigs {
		keepName, keepPort := false, false
		for _, r := range sc.RelabelConfigs {
			if r.Action != "keep" || len(r.SourceLabels) != 1 {
				continue
			}
			re, err := regexp.Compile("^(?:" + r.Regex.String() + ")$")
			if err != nil {
				continue
			}
			switch string(r.SourceLabels[0]) {
			case "__meta_kubernetes_pod_label_app_kubernetes_io_name":
				keepName = re.MatchString(name)
			case "__meta_kubernetes_pod_container_port_name":
				keepPort = re.MatchString(port)
			}
		}
		found = found || keepName && keepPort && sc.MetricsPath == "/metrics"
	}
	if !found {
		errs = append(errs, fmt.Errorf("%w: %s: no job keeps the pods labelled app.kubernetes.io/name=%s on port %q, path /metrics", ErrScrape, path, name, port))
	}
	listed := false
	for _, f := range cfg.RuleFiles {
		listed = listed || f == rules
	}
	if !listed {
		errs = append(errs, fmt.Errorf("%w: %s: rule_files does not list %s", ErrScrape, path, rules))
	}
	return errors.Join(errs...)
}
