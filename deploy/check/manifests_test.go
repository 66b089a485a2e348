package check

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// sweepFlags are the flags of the test's cellttl, built from
// testdata/fakecellttl: those of the command plus the lease's and the
// metrics'.
func sweepFlags(t *testing.T, root string) Flags {
	t.Helper()
	img, err := ParseDockerfile(filepath.Join(root, "deploy/Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	bin, err := img.Build(context.Background(), root, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fl, err := HelpOf(context.Background(), bin, "sweep")
	if err != nil {
		t.Fatal(err)
	}
	return fl
}

func TestManifestsOfTheRepository(t *testing.T) {
	root := fakeRoot(t, true)
	m, err := ParseManifests(filepath.Join(root, "deploy/k8s"))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Deployments) != 1 || len(m.ServiceAccounts) != 1 || len(m.PodMonitors) != 1 || len(m.Budgets) != 1 || len(m.Namespaces) != 1 {
		t.Errorf("objects %+v", m)
	}
	if err := m.CheckSweepers(sweepFlags(t, root)); err != nil {
		t.Error(err)
	}
}

// Each change to the repository's manifests that would break the
// deployment fails the check, naming the fault.
func TestManifestsRefuse(t *testing.T) {
	root := fakeRoot(t, true)
	fl := sweepFlags(t, root)
	for _, tc := range []struct {
		name, file, old, new, want string
	}{
		{"unknown field", "deployment.yaml", "replicas: 2", "replicas: 2\n  replica: 2", `unknown field "replica"`},
		{"wrong type", "deployment.yaml", "replicas: 2", "replicas: two", "replicas"},
		{"unknown kind", "namespace.yaml", "kind: Namespace", "kind: Namespaces", `kind "Namespaces": not a kind the check knows`},
		{"replicas", "deployment.yaml", "replicas: 2", "replicas: 1", "replicas: want 2"},
		{"a flag sweep lacks", "deployment.yaml", "- -quiet", "- -quiet\n            - -leese=15s", "-leese: the command takes no such flag"},
		{"no lease", "deployment.yaml", "            - -lease=15s\n", "", "no -lease"},
		{"a file checkpoint", "deployment.yaml", "-checkpoint=bigtable:sweeps/sessions", "-checkpoint=sweep.json", "want bigtable:TABLE/KEY"},
		{"text logs", "deployment.yaml", "-log-format=json", "-log-format=text", "-log-format text: want json"},
		{"not sweep", "deployment.yaml", "- sweep\n", "- stats\n", "args must begin with sweep"},
		{"bad metrics address", "deployment.yaml", "-metrics-addr=:9090", "-metrics-addr=9090", "want HOST:PORT"},
		{"metrics on another port", "deployment.yaml", "-metrics-addr=:9090", "-metrics-addr=:9091", "no port 9091"},
		{"liveness path", "deployment.yaml", "path: /healthz", "path: /health", `liveness probe: path "/health"`},
		{"readiness port", "deployment.yaml", "path: /readyz\n              port: metrics", "path: /readyz\n              port: 8080", "readiness probe: port 8080"},
		{"no readiness", "deployment.yaml", "readinessProbe:", "startupProbe:", "no readiness probe"},
		{"no cpu request", "deployment.yaml", "              cpu: 100m\n", "", "no resources.requests.cpu"},
		{"no memory limit", "deployment.yaml", "limits:\n              memory: 256Mi", "limits:\n              cpu: 1", "no resources.limits.memory"},
		{"root", "deployment.yaml", "runAsNonRoot: true", "runAsNonRoot: false", "runAsNonRoot is not true"},
		{"writable", "deployment.yaml", "readOnlyRootFilesystem: true", "readOnlyRootFilesystem: false", "readOnlyRootFilesystem is not true"},
		{"escalation", "deployment.yaml", "allowPrivilegeEscalation: false", "allowPrivilegeEscalation: true", "allowPrivilegeEscalation is not false"},
		{"service account", "deployment.yaml", "serviceAccountName: cellttl-sweep", "serviceAccountName: default", `serviceAccountName "default": no such ServiceAccount`},
		{"no workload identity", "serviceaccount.yaml", "iam.gke.io/gcp-service-account", "example.com/other", "no iam.gke.io/gcp-service-account annotation"},
		{"podmonitor port", "podmonitor.yaml", "port: metrics", "port: http", "no PodMonitor selects its pods"},
		{"podmonitor labels", "podmonitor.yaml", "app.kubernetes.io/name: cellttl-sweep\n  podMetricsEndpoints", "app.kubernetes.io/name: other\n  podMetricsEndpoints", "no PodMonitor selects its pods"},
		{"no budget", "poddisruptionbudget.yaml", "namespace: cellttl", "namespace: other", "no PodDisruptionBudget"},
		{"two containers", "deployment.yaml", "      containers:\n", "      containers:\n        - name: sidecar\n          image: x\n", "want one container"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			k8s, _ := filepath.Glob(filepath.Join(root, "deploy/k8s/*.yaml"))
			for _, f := range k8s {
				if filepath.Base(f) == tc.file {
					copyFile(t, f, filepath.Join(dir, tc.file), tc.old, tc.new)
				} else {
					copyFile(t, f, filepath.Join(dir, filepath.Base(f)))
				}
			}
			m, err := ParseManifests(dir)
			if err == nil {
				err = m.CheckSweepers(fl)
			}
			if !errors.Is(err, ErrManifest) {
				t.Errorf("error %v, want ErrManifest", err)
			}
			wantErr(t, err, tc.want)
		})
	}
}

func TestManifestsEdges(t *testing.T) {
	if _, err := ParseManifests(t.TempDir()); !errors.Is(err, ErrManifest) {
		t.Errorf("no manifest: %v", err)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.yaml"), "# comments only\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n")
	m, err := ParseManifests(dir)
	if err != nil || len(m.Namespaces) != 1 {
		t.Fatalf("%+v %v", m, err)
	}
	wantErr(t, m.CheckSweepers(Flags{}), "no Deployment")
	writeFile(t, filepath.Join(dir, "b.yaml"), "kind: [\n")
	if _, err := ParseManifests(dir); !errors.Is(err, ErrManifest) {
		t.Errorf("bad YAML: %v", err)
	}
	if err := os.Chmod(filepath.Join(dir, "b.yaml"), 0); err == nil && os.Getuid() != 0 {
		if _, err := ParseManifests(dir); err == nil {
			t.Error("an unreadable file: no error")
		}
	}
}
