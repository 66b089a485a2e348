package check

import (
	"errors"
	"fmt"
	"os"
	"regexp"

	"github.com/prometheus/common/model"
	"sigs.k8s.io/yaml"
)

// ErrScrape reports a Prometheus configuration that is not one, or one
// that would not scrape the sweeper's pods.
var ErrScrape = errors.New("scrape config")

// A scrapeFile is the part of Prometheus's configuration file the
// deploy folder's scrape config writes: an unknown field is refused.
// (Prometheus's own loader, github.com/prometheus/prometheus/config,
// needs its Kubernetes discovery and so client-go: a build of minutes on
// a cold cache for one file. The rules, the part that matters, go
// through Prometheus's own parser.)
type scrapeFile struct {
	ScrapeConfigs []struct {
		JobName             string `json:"job_name"`
		ScrapeInterval      string `json:"scrape_interval"`
		MetricsPath         string `json:"metrics_path"`
		KubernetesSDConfigs []struct {
			Role       string `json:"role"`
			Namespaces struct {
				Names []string `json:"names"`
			} `json:"namespaces"`
		} `json:"kubernetes_sd_configs"`
		RelabelConfigs []struct {
			SourceLabels []string `json:"source_labels"`
			Regex        string   `json:"regex"`
			Action       string   `json:"action"`
			TargetLabel  string   `json:"target_label"`
		} `json:"relabel_configs"`
	} `json:"scrape_configs"`
	RuleFiles []string `json:"rule_files"`
}

// Scrape reads the Prometheus configuration at path (unknown fields
// refused, durations as Prometheus spells them) and checks that a job
// scrapes /metrics of the pods labelled app.kubernetes.io/name=name on
// the port named port, and that rule_files lists rules, the base name of
// the rules file.
func Scrape(path, name, port, rules string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var cfg scrapeFile
	if err := yaml.UnmarshalStrict(b, &cfg); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrScrape, path, err)
	}
	var errs []error
	found := false
	for _, sc := range cfg.ScrapeConfigs {
		if sc.ScrapeInterval != "" {
			if _, err := model.ParseDuration(sc.ScrapeInterval); err != nil {
				errs = append(errs, fmt.Errorf("%w: %s: job %s: scrape_interval: %w", ErrScrape, path, sc.JobName, err))
			}
		}
		keepName, keepPort := false, false
		for _, r := range sc.RelabelConfigs {
			if r.Action != "keep" || len(r.SourceLabels) != 1 {
				continue
			}
			re, err := regexp.Compile("^(?:" + r.Regex + ")$")
			if err != nil {
				errs = append(errs, fmt.Errorf("%w: %s: job %s: regex %q: %w", ErrScrape, path, sc.JobName, r.Regex, err))
				continue
			}
			switch r.SourceLabels[0] {
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
