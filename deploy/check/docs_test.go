package check

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

var deployment = Deployment{
	Dockerfile: "deploy/Dockerfile", Manifests: "deploy/k8s/",
	BuildLine: "go build -o /out/x .", CheckLine: "go run ./check",
	Checkpoint: "sweeps", Instance: "I", GSA: "sa@P.iam.gserviceaccount.com", Member: "P.svc.id.goog[ns/ksa]",
}

func guide(t *testing.T, cmds ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "deploy.md")
	writeFile(t, path, "# Guide\n\n$ not in a block\n\n```sh\n"+strings.Join(cmds, "\n")+"\nno dollar, not a command\n```\n")
	return path
}

func TestCommands(t *testing.T) {
	cmds, err := Commands(guide(t,
		"$ go build -o /out/x .",
		"$ go run ./check",
		"$ docker build -f deploy/Dockerfile -t r/x:v .",
		"$ kubectl apply -f deploy/k8s/",
		"$ cbt -project P -instance I createtable sweeps families=cp:maxversions=1",
		"$ gcloud iam service-accounts create sa",
		"$ gcloud bigtable instances add-iam-policy-binding I --member=serviceAccount:sa@P.iam.gserviceaccount.com --role=roles/bigtable.user",
		`$ gcloud iam service-accounts add-iam-policy-binding sa@P.iam.gserviceaccount.com --role roles/iam.workloadIdentityUser "--member=serviceAccount:P.svc.id.goog[ns/ksa]"`,
	), deployment)
	if err != nil {
		t.Fatal(err)
	}
	var how []string
	for _, c := range cmds {
		how = append(how, c[0])
	}
	if strings.Join(how, " ") != "run run parsed parsed parsed parsed parsed parsed" {
		t.Errorf("verified as %v", how)
	}
}

func TestCommandsRefuse(t *testing.T) {
	for _, tc := range []struct{ cmd, want string }{
		{"$ go build -o /out/y .", "neither runs this command"},
		{"$ helm install x", "neither runs this command"},
		{"$ docker build -f Dockerfile .", `Dockerfile "Dockerfile"`},
		{"$ docker build -f deploy/Dockerfile deploy", `context "deploy"`},
		{"$ kubectl apply -f k8s/", `manifests "k8s/"`},
		{"$ cbt -project P -instance I createtable cp families=cp:maxversions=1", `table "cp"`},
		{"$ cbt -project P -instance I createtable sweeps families=cp", `families "families=cp"`},
		{"$ cbt -project P -instance J createtable sweeps families=cp:maxversions=1", `instance "J"`},
		{"$ gcloud iam service-accounts create other", `service account "other"`},
		{"$ gcloud bigtable instances add-iam-policy-binding I --member=serviceAccount:sa@P.iam.gserviceaccount.com --role=roles/bigtable.admin", `role "roles/bigtable.admin"`},
		{"$ gcloud iam service-accounts add-iam-policy-binding sa@P.iam.gserviceaccount.com --role=roles/iam.workloadIdentityUser --member=serviceAccount:P.svc.id.goog[default/ksa]", "member"},
	} {
		_, err := Commands(guide(t, tc.cmd), deployment)
		if !errors.Is(err, ErrDocs) {
			t.Errorf("%s: %v, want ErrDocs", tc.cmd, err)
		}
		wantErr(t, err, tc.want)
	}
	_, err := Commands(guide(t), deployment)
	wantErr(t, err, "no command")
	if _, err := Commands(filepath.Join(t.TempDir(), "none.md"), deployment); err == nil {
		t.Error("a missing file: no error")
	}
}
