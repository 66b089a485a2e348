package check

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
)

// ErrDocs reports a command docs/deploy.md shows that the check neither
// runs nor checks against what it deploys.
var ErrDocs = errors.New("docs")

// Deployment is what the guide's commands must agree with: the paths, as
// the guide writes them from the repository's root, and the values the
// checked files hold.
type Deployment struct {
	Dockerfile string // deploy/Dockerfile
	Manifests  string // deploy/k8s/
	BuildLine  string // the Dockerfile's go build line
	CheckLine  string // the command that runs this check
	Checkpoint string // the checkpoint table, of -checkpoint bigtable:TABLE/KEY
	Instance   string // the Deployment's -instance
	GSA        string // the Workload Identity annotation's service account
	Member     string // PROJECT.svc.id.goog[NAMESPACE/SERVICEACCOUNT]
}

// How a guide's command is verified.
const (
	Ran    = "run"    // CI runs exactly this line
	Parsed = "parsed" // only parsed: its arguments are those of the checked files
)

// Commands reads the "$ " lines of the fenced blocks of the guide at path
// and verifies each against d: the build line and the check's own line,
// which CI runs; docker build, kubectl apply, cbt createtable, and
// gcloud's creation of the service account and its IAM bindings, whose arguments must name the checked files and
// values. Any other command fails. It returns each command with how it
// was verified.
func Commands(path string, d Deployment) ([][2]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out [][2]string
	var errs []error
	fenced := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		cmd, ok := strings.CutPrefix(line, "$ ")
		if !fenced || !ok {
			continue
		}
		how, err := d.verify(strings.TrimSpace(cmd))
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: %s:%d: %s: %w", ErrDocs, path, n, cmd, err))
			continue
		}
		out = append(out, [2]string{how, cmd})
	}
	if len(out) == 0 && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("%w: %s: no command (\"$ \" lines in fenced blocks)", ErrDocs, path))
	}
	return out, errors.Join(errs...)
}

// verify says how one command is verified, or why it cannot be.
func (d Deployment) verify(cmd string) (string, error) {
	f := strings.Fields(strings.NewReplacer(`"`, "", "'", "").Replace(cmd))
	want := func(what string, have, expect string) error {
		if have != expect {
			return fmt.Errorf("%s %q, but the checked files have %q", what, have, expect)
		}
		return nil
	}
	flag := func(name string) string {
		for i, a := range f {
			if v, ok := strings.CutPrefix(a, name+"="); ok {
				return v
			}
			if a == name && i+1 < len(f) {
				return f[i+1]
			}
		}
		return ""
	}
	arg := func(i int) string {
		if i >= 0 && i < len(f) {
			return f[i]
		}
		return ""
	}
	switch {
	case cmd == d.BuildLine || cmd == d.CheckLine:
		return Ran, nil
	case strings.HasPrefix(cmd, "docker build "):
		return Parsed, errors.Join(want("Dockerfile", flag("-f"), d.Dockerfile), want("context", arg(len(f)-1), "."))
	case strings.HasPrefix(cmd, "kubectl apply "):
		return Parsed, want("manifests", flag("-f"), d.Manifests)
	case arg(0) == "cbt" && arg(len(f)-3) == "createtable":
		return Parsed, errors.Join(want("instance", flag("-instance"), d.Instance),
			want("table", arg(len(f)-2), d.Checkpoint), want("families", arg(len(f)-1), "families=cp:maxversions=1"))
	case strings.HasPrefix(cmd, "gcloud bigtable instances add-iam-policy-binding "):
		return Parsed, errors.Join(want("instance", arg(4), d.Instance),
			want("member", flag("--member"), "serviceAccount:"+d.GSA), want("role", flag("--role"), "roles/bigtable.user"))
	case strings.HasPrefix(cmd, "gcloud iam service-accounts create "):
		name, _, _ := strings.Cut(d.GSA, "@")
		return Parsed, want("service account", arg(4), name)
	case strings.HasPrefix(cmd, "gcloud iam service-accounts add-iam-policy-binding "):
		return Parsed, errors.Join(want("service account", arg(4), d.GSA),
			want("member", flag("--member"), "serviceAccount:"+d.Member), want("role", flag("--role"), "roles/iam.workloadIdentityUser"))
	}
	return "", errors.New("the check neither runs this command nor knows what to compare it with")
}
