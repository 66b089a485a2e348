package check

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Layout names the files of a checkout the check reads, relative to its
// root.
type Layout struct {
	Catalogue  string // docs/metrics.md
	Rules      string // deploy/prometheus/alerts.yml
	Scrape     string // deploy/prometheus/scrape.yml
	Dashboard  string // deploy/grafana/sweep.json
	Dockerfile string // deploy/Dockerfile
	Manifests  string // deploy/k8s
	Guide      string // docs/deploy.md
	CheckLine  string // the line that runs this check, as the guide shows it
}

// Repository is the layout of the cellttl repository.
var Repository = Layout{
	Catalogue:  "docs/metrics.md",
	Rules:      "deploy/prometheus/alerts.yml",
	Scrape:     "deploy/prometheus/scrape.yml",
	Dashboard:  "deploy/grafana/sweep.json",
	Dockerfile: "deploy/Dockerfile",
	Manifests:  "deploy/k8s",
	Guide:      "docs/deploy.md",
	CheckLine:  "cd deploy/check && go run ./cmd/deploycheck -root ../..",
}

// Run runs every check over the checkout at root, as l lays it out,
// building the command with the Dockerfile's build line into a temporary
// folder it removes. It writes one line per check passed to w and
// returns every fault found, joined.
func Run(ctx context.Context, root string, l Layout, w io.Writer) error {
	at := func(p string) string { return filepath.Join(root, p) }
	var errs []error
	note := func(err error, format string, a ...any) {
		if err != nil {
			errs = append(errs, err)
			return
		}
		fmt.Fprintf(w, "ok: "+format+"\n", a...)
	}
	md, err := os.ReadFile(at(l.Catalogue))
	if err != nil {
		return err
	}
	cat, err := ParseCatalogue(md)
	if err != nil {
		return fmt.Errorf("%s: %w", l.Catalogue, err)
	}
	rules, err := Rules(at(l.Rules), cat)
	note(err, "%s: %d rules parse with Prometheus's rule parser and query only the %d metric names of %s", l.Rules, len(rules), len(cat), l.Catalogue)
	panels, err := Dashboard(at(l.Dashboard), cat)
	note(err, "%s: %d panels query only metrics of %s", l.Dashboard, len(panels), l.Catalogue)

	img, err := ParseDockerfile(at(l.Dockerfile))
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	note(img.CheckGo(img.BuildDir(root)), "%s: builder %s is at least the Go its module requires", l.Dockerfile, img.Builder)
	out, err := os.MkdirTemp("", "deploycheck")
	if err != nil {
		return err
	}
	defer os.RemoveAll(out)
	bin, err := img.Build(ctx, root, out)
	note(err, "%s: %q builds the %s the image copies and runs", l.Dockerfile, img.BuildLine, img.Output)
	if err != nil {
		return errors.Join(errs...)
	}
	fl, err := HelpOf(ctx, bin, "sweep")
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	m, err := ParseManifests(at(l.Manifests))
	note(err, "%s: every manifest parses strictly into its typed object", l.Manifests)
	if err == nil {
		note(m.CheckSweepers(fl), "%s: the sweeper's Deployment: %d replicas, flags that \"cellttl sweep -h\" lists, probes on -metrics-addr, scraped", l.Manifests, Replicas)
	}
	note(Scrape(at(l.Scrape), "cellttl-sweep", "metrics", filepath.Base(l.Rules)), "%s: its fields parse strictly; it scrapes the sweeper's pods", l.Scrape)

	d := Deployment{Dockerfile: l.Dockerfile, Manifests: l.Manifests + "/", BuildLine: img.BuildLine, CheckLine: l.CheckLine}
	if m != nil {
		d.fill(m, fl)
	}
	cmds, err := Commands(at(l.Guide), d)
	if err == nil {
		for _, c := range cmds {
			fmt.Fprintf(w, "    %-6s  %s\n", c[0], c[1])
		}
	}
	note(err, "%s: %d commands, each run by CI or checked against the files above", l.Guide, len(cmds))
	return errors.Join(errs...)
}

// fill takes from the first Deployment of m, and its service account, the
// values the guide's commands must show.
func (d *Deployment) fill(m *Manifests, fl Flags) {
	if len(m.Deployments) == 0 || len(m.Deployments[0].Spec.Template.Spec.Containers) == 0 {
		return
	}
	dep := m.Deployments[0]
	pod := dep.Spec.Template.Spec
	args := pod.Containers[0].Args
	if len(args) > 0 {
		vals, _ := fl.Parse(args[1:])
		d.Instance = vals["instance"]
		cp, _ := strings.CutPrefix(vals["checkpoint"], "bigtable:")
		d.Checkpoint, _, _ = strings.Cut(cp, "/")
	}
	if sa := m.serviceAccount(dep.Namespace, pod.ServiceAccountName); sa != nil {
		d.GSA = sa.Annotations[WorkloadIdentity]
		_, domain, _ := strings.Cut(d.GSA, "@")
		project, _, _ := strings.Cut(domain, ".")
		d.Member = fmt.Sprintf("%s.svc.id.goog[%s/%s]", project, sa.Namespace, sa.Name)
	}
}
