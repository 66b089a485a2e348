package check

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The repository's Dockerfile builds cmd/cellttl, copies it from the
// builder and runs it.
func TestDockerfileOfTheRepository(t *testing.T) {
	img, err := ParseDockerfile(filepath.Join(repo, "deploy/Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if img.BuildLine != "cd cmd/cellttl && CGO_ENABLED=0 go build -trimpath -o /out/cellttl ." {
		t.Errorf("build line %q", img.BuildLine)
	}
	if img.Output != "/out/cellttl" || img.Entrypoint != "/cellttl" || !strings.HasPrefix(img.Final, "gcr.io/distroless/static") {
		t.Errorf("image %+v", img)
	}
	if img.Env["CGO_ENABLED"] != "" || img.Env["GOTOOLCHAIN"] != "local" {
		t.Errorf("builder env %v", img.Env)
	}
	if err := img.CheckGo(img.BuildDir(repo)); err != nil {
		t.Error(err)
	}
}

// The build line runs, in a checkout, and writes the binary the image
// copies; a line that fails is reported with its output.
func TestDockerfileBuilds(t *testing.T) {
	root := fakeRoot(t, true)
	img, err := ParseDockerfile(filepath.Join(root, "deploy/Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	bin, err := img.Build(context.Background(), root, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fl, err := HelpOf(context.Background(), bin, "sweep")
	if err != nil || !fl["lease"] || fl["quiet"] {
		t.Errorf("flags %v, %v", fl, err)
	}
	if _, err := HelpOf(context.Background(), bin, "nosuch"); !errors.Is(err, ErrFlag) {
		t.Errorf("a command that lists no flag: %v", err)
	}

	if err := os.Remove(filepath.Join(root, "cmd/cellttl/main.go")); err != nil {
		t.Fatal(err)
	}
	_, err = img.Build(context.Background(), root, t.TempDir())
	wantErr(t, err, "build line", "no Go files")

	img.BuildLine = "true -o /out/cellttl"
	_, err = img.Build(context.Background(), root, t.TempDir())
	wantErr(t, err, "wrote no executable")
}

func dockerfile(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "Dockerfile")
	writeFile(t, path, text)
	return path
}

const goodDockerfile = `# comment
FROM golang:1.26.8 AS build
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/x \
    go build -o /out/app ./cmd/app
FROM scratch
COPY --from=build /out/app /app
ENTRYPOINT ["/app"]
`

func TestDockerfileRefuses(t *testing.T) {
	for _, tc := range []struct{ name, old, new, want string }{
		{"no go build", "go build -o /out/app", "go vet", "no RUN line runs go build"},
		{"no COPY of the context", "COPY . .", "COPY go.mod .", "does not COPY ."},
		{"build in the last stage", goodDockerfile, "FROM scratch\nFROM golang:1.26.8\nCOPY . .\nRUN go build -o /out/app .\nENTRYPOINT [\"/out/app\"]\n", "build runs in the last stage"},
		{"another binary copied", "COPY --from=build /out/app /app", "COPY --from=build /out/other /app", "does not COPY --from=build /out/app"},
		{"entrypoint not the binary", `ENTRYPOINT ["/app"]`, `ENTRYPOINT ["/bin/sh"]`, `ENTRYPOINT "/bin/sh" is not the binary`},
		{"shell form", `ENTRYPOINT ["/app"]`, `ENTRYPOINT /app`, "want the exec form"},
		{"one stage", "FROM scratch\nCOPY --from=build /out/app /app\nENTRYPOINT [\"/app\"]\n", "", "want two stages"},
		{"before FROM", "# comment\n", "WORKDIR /x\n", "WORKDIR before FROM"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := strings.Replace(goodDockerfile, tc.old, tc.new, 1)
			_, err := ParseDockerfile(dockerfile(t, text))
			if !errors.Is(err, ErrDockerfile) {
				t.Errorf("error %v, want ErrDockerfile", err)
			}
			wantErr(t, err, tc.want)
		})
	}
	if _, err := ParseDockerfile(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("a missing file: no error")
	}
}

// The builder's Go must be at least the go directive of the module it
// builds, found up the tree from the build folder.
func TestDockerfileGo(t *testing.T) {
	img, err := ParseDockerfile(dockerfile(t, goodDockerfile))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	sub := filepath.Join(root, "cmd", "app")
	writeFile(t, filepath.Join(sub, "main.go"), "package main\n")
	if img.BuildDir(root) != root {
		t.Errorf("build dir %s, want the root", img.BuildDir(root))
	}
	for _, tc := range []struct{ directive, want string }{
		{"go 1.26.8\n", ""}, {"go 1.22\n", ""}, {"go 1.25.9\n", ""},
		{"go 1.26.9\n", "older than go 1.26.9"}, {"go 1.27\n", "older than go 1.27"},
		{"module x\n", "no go directive"},
	} {
		writeFile(t, filepath.Join(root, "go.mod"), tc.directive)
		err := img.CheckGo(sub)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%q: %v, want %q", tc.directive, err, tc.want)
		}
	}
	img.Builder = "debian:12"
	wantErr(t, img.CheckGo(sub), "want golang:X.Y.Z")
	img.Builder = "golang:1.26.8"
	wantErr(t, img.CheckGo("/"), "no go.mod governs")
}
