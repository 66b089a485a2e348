package check

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// repo is the repository's root, from this package's folder.
const repo = "../.."

// copyFile copies src to dst, creating dst's folder, with each
// replacement (old, new, old, new...) applied; it fails the test if an
// old string is not found.
func copyFile(t *testing.T, src, dst string, replace ...string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for i := 0; i+1 < len(replace); i += 2 {
		if !strings.Contains(s, replace[i]) {
			t.Fatalf("%s: no %q to replace", src, replace[i])
		}
		s = strings.Replace(s, replace[i], replace[i+1], 1)
	}
	writeFile(t, dst, s)
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fakeRoot returns a checkout holding the repository's deploy/ files and
// guide, its metrics catalogue (with the lease's rows when lease is set),
// and, as cmd/cellttl, testdata/fakecellttl: a command whose "sweep -h"
// lists the flags the manifests use.
func fakeRoot(t *testing.T, lease bool) string {
	t.Helper()
	root := t.TempDir()
	md, err := os.ReadFile(filepath.Join(repo, "docs/metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	if lease {
		rows, err := os.ReadFile("testdata/lease-metrics.md")
		if err != nil {
			t.Fatal(err)
		}
		md = append(md, rows...)
	}
	writeFile(t, filepath.Join(root, "docs/metrics.md"), string(md))
	copyFile(t, filepath.Join(repo, "docs/deploy.md"), filepath.Join(root, "docs/deploy.md"))
	for _, f := range []string{"Dockerfile", "prometheus/alerts.yml", "prometheus/scrape.yml", "grafana/sweep.json"} {
		copyFile(t, filepath.Join(repo, "deploy", f), filepath.Join(root, "deploy", f))
	}
	k8s, _ := filepath.Glob(filepath.Join(repo, "deploy/k8s/*.yaml"))
	for _, f := range k8s {
		copyFile(t, f, filepath.Join(root, "deploy/k8s", filepath.Base(f)))
	}
	for _, f := range []string{"main.go", "go.mod"} {
		copyFile(t, filepath.Join("testdata/fakecellttl", f), filepath.Join(root, "cmd/cellttl", f))
	}
	return root
}

// wantErr fails the test unless err is non-nil and its message holds
// every one of want.
func wantErr(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one saying %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
