package check

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Run passes over the repository's deploy/ files once the catalogue has
// the lease's rows and the command the lease's and the metrics' flags
// (testdata stands in for both), and says what it checked.
func TestRun(t *testing.T) {
	root := fakeRoot(t, true)
	var out bytes.Buffer
	if err := Run(context.Background(), root, Repository, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"alerts.yml", "sweep.json", "builds the /out/cellttl", "every manifest parses", "2 replicas", "scrape.yml", "docs/deploy.md", "run     cd deploy/check"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output does not say %q:\n%s", want, out.String())
		}
	}
}

// Without the lease's rows, Run names the three lease metrics and nothing
// else of the rules and the dashboard.
func TestRunWithoutTheLeaseMetrics(t *testing.T) {
	root := fakeRoot(t, false)
	md := string(mustRead(t, filepath.Join(root, "docs/metrics.md")))
	var kept []string
	for _, line := range strings.Split(md, "\n") {
		if !strings.Contains(line, "cellttl.sweep.lease.") {
			kept = append(kept, line)
		}
	}
	writeFile(t, filepath.Join(root, "docs/metrics.md"), strings.Join(kept, "\n"))
	err := Run(context.Background(), root, Repository, &bytes.Buffer{})
	wantErr(t, err, "cellttl_sweep_lease_held", "cellttl_sweep_lease_acquired_total", "cellttl_sweep_lease_lost_total")
	for _, line := range strings.Split(err.Error(), "\n") {
		if !strings.Contains(line, "cellttl_sweep_lease_") {
			t.Errorf("a fault other than the lease's metrics: %s", line)
		}
	}
}

// A fault stops nothing else: a broken build still reports the rules,
// and a missing catalogue or Dockerfile stops the run, saying so.
func TestRunFaults(t *testing.T) {
	root := fakeRoot(t, true)
	writeFile(t, filepath.Join(root, "cmd/cellttl/main.go"), "package main\nfunc main() { x }\n")
	var out bytes.Buffer
	err := Run(context.Background(), root, Repository, &out)
	wantErr(t, err, "build line")
	if !strings.Contains(out.String(), "alerts.yml") {
		t.Errorf("the rules were not checked:\n%s", out.String())
	}
	if err := os.Remove(filepath.Join(root, "deploy/Dockerfile")); err != nil {
		t.Fatal(err)
	}
	wantErr(t, Run(context.Background(), root, Repository, &out), "Dockerfile")
	if err := os.Remove(filepath.Join(root, "docs/metrics.md")); err != nil {
		t.Fatal(err)
	}
	wantErr(t, Run(context.Background(), root, Repository, &out), "metrics.md")
	writeFile(t, filepath.Join(root, "docs/metrics.md"), "nothing\n")
	wantErr(t, Run(context.Background(), root, Repository, &out), "no instrument table")
}
