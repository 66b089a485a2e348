package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSurfaceRecorded fails when the module's public surface differs from
// api/: a change to it must come with the listing (go run
// ./cmd/apicheck -write), so that it is reviewed.
func TestSurfaceRecorded(t *testing.T) {
	diffs, counts, err := run("../..", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Error(d)
	}
	if len(diffs) > 0 {
		t.Log("if the change is meant: go run ./cmd/apicheck -write, and commit api/")
	}
	// The core a service links stays small: 79 names when the operators'
	// tools left it (issue 1), 88 with the writes without a recipe
	// (ApplyRow, ApplyBatch, RowWriter and its six methods: issue 22).
	for _, c := range counts {
		if c.pkg == "github.com/cellttl/ttl" && c.names > 90 {
			t.Errorf("package ttl exports %d names; the write and read path is kept under 90", c.names)
		}
	}
}

// TestListing lists the fixture module and checks every kind of line.
func TestListing(t *testing.T) {
	dir := copyFixture(t, "mod")
	diffs, counts, err := run(dir, true)
	if err != nil || len(diffs) > 0 {
		t.Fatalf("write: %v, %v", diffs, err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "api", "mod.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := `pkg example.com/mod, const High Level = iota (iota 1)
pkg example.com/mod, const Low Level = iota (iota 0)
pkg example.com/mod, const Prefix = base + "x:"
pkg example.com/mod, func Map[T, U any]([]T, func(T) U) []U
pkg example.com/mod, func New(string, ...func(*Config)) (*Config, error)
pkg example.com/mod, method (*Box) Get() T
pkg example.com/mod, method (Config) Run()
pkg example.com/mod, type Alias = Config
pkg example.com/mod, type Box[T any, K comparable] struct
pkg example.com/mod, type Box[T any, K comparable] struct, Value T
pkg example.com/mod, type Config struct
pkg example.com/mod, type Config struct, Name string
pkg example.com/mod, type Config struct, Timeout time.Duration
pkg example.com/mod, type Config struct, embedded *Embedded
pkg example.com/mod, type Doer interface { Do, embedded Embedded2, unexported methods }
pkg example.com/mod, type Doer interface, Do(string, string, int) (bool, error)
pkg example.com/mod, type Doer interface, embedded Embedded2
pkg example.com/mod, type Embedded struct
pkg example.com/mod, type Embedded2 interface { Close }
pkg example.com/mod, type Embedded2 interface, Close() error
pkg example.com/mod, type Level int
pkg example.com/mod, var Default Config
pkg example.com/mod, var ErrBad error
pkg example.com/mod, var Pointer *Config
pkg example.com/mod, var Typed int
`
	if string(got) != want {
		t.Errorf("api/mod.txt:\n%s\nwant:\n%s", got, want)
	}
	sub, err := os.ReadFile(filepath.Join(dir, "api", "pkg-sub.txt"))
	if err != nil || string(sub) != "pkg example.com/mod/pkg/sub, func F()\n" {
		t.Errorf("api/pkg-sub.txt: %q, %v", sub, err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "api"))
	if len(entries) != 2 {
		t.Errorf("api/ holds %d files; internal, main, nested-module and test code are not listed", len(entries))
	}
	if len(counts) != 2 || counts[0].names != 18 || counts[1].names != 1 {
		t.Errorf("counts %+v: want 18 names in mod (fields and interface methods not counted), 1 in sub", counts)
	}

	// Unchanged, the check passes; a changed surface, a missing file and
	// a stale one are each reported.
	if diffs, _, err := run(dir, false); err != nil || len(diffs) > 0 {
		t.Fatalf("check after write: %v, %v", diffs, err)
	}
	edit(t, filepath.Join(dir, "root.go"), "func helper() {}", "func Helper() {}")
	os.Remove(filepath.Join(dir, "api", "pkg-sub.txt"))
	os.WriteFile(filepath.Join(dir, "api", "gone.txt"), []byte("pkg example.com/mod/gone, func G()\n"), 0o644)
	edit(t, filepath.Join(dir, "api", "mod.txt"), "pkg example.com/mod, var Typed int\n", "pkg example.com/mod, var Typed string\n")
	diffs, _, err = run(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	wantDiffs := []string{
		"mod.txt: + pkg example.com/mod, func Helper()",
		"mod.txt: + pkg example.com/mod, var Typed int",
		"mod.txt: - pkg example.com/mod, var Typed string",
		"pkg-sub.txt: missing (package example.com/mod/pkg/sub)",
		"gone.txt: no package has this surface any more",
	}
	if len(diffs) != len(wantDiffs) {
		t.Fatalf("diffs:\n%s", strings.Join(diffs, "\n"))
	}
	for i, w := range wantDiffs {
		if !strings.HasSuffix(diffs[i], w) {
			t.Errorf("diff %d = %q, want …%q", i, diffs[i], w)
		}
	}
	if _, _, err := run(dir, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "api", "gone.txt")); !os.IsNotExist(err) {
		t.Errorf("write kept the stale gone.txt: %v", err)
	}
}

// TestListingRefuses checks the inputs the tool refuses: a variable whose
// type the syntax does not say, a directory without go.mod, a module that
// does not parse.
func TestListingRefuses(t *testing.T) {
	if _, _, err := run(copyFixture(t, "bad"), false); err == nil || !strings.Contains(err.Error(), "cannot tell the type of var V") {
		t.Errorf("bad: %v", err)
	}
	if _, _, err := run(t.TempDir(), false); err == nil {
		t.Error("a directory without go.mod: no error")
	}
	dir := copyFixture(t, "mod")
	os.WriteFile(filepath.Join(dir, "broken.go"), []byte("package mod\nfunc ("), 0o644)
	if _, _, err := run(dir, false); err == nil {
		t.Error("a file that does not parse: no error")
	}
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("go 1.22\n"), 0o644)
	if _, _, err := run(dir, false); err == nil || !strings.Contains(err.Error(), "names no module") {
		t.Errorf("a go.mod without a module line: %v", err)
	}
}

// copyFixture copies testdata/name to a temporary directory.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	dst := t.TempDir()
	src := filepath.Join("testdata", name)
	err := filepath.Walk(src, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// edit replaces the first from in the file at path by to.
func edit(t *testing.T, path, from, to string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), from) {
		t.Fatalf("%s: %v, or no %q", path, err, from)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), from, to, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCommand runs the command as CI does: its exit statuses and what it
// prints.
func TestCommand(t *testing.T) {
	dir := copyFixture(t, "mod")
	var out, errOut strings.Builder
	if code := apicheck([]string{"-module", dir}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "missing (package example.com/mod)") {
		t.Errorf("no api/ yet: status %d, %s", code, errOut.String())
	}
	if code := apicheck([]string{"-module", dir, "-write"}, &out, &errOut); code != 0 {
		t.Errorf("-write: status %d, %s", code, errOut.String())
	}
	out.Reset()
	if code := apicheck([]string{"-module", dir}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "example.com/mod: 18 exported names") {
		t.Errorf("up to date: status %d, %q", code, out.String())
	}
	if code := apicheck([]string{"-module", t.TempDir()}, &out, &errOut); code != 2 {
		t.Errorf("no module: status %d", code)
	}
	if code := apicheck([]string{"-bogus"}, &out, &errOut); code != 2 {
		t.Errorf("a bad flag: status %d", code)
	}
}

// TestCompare checks that compare reports the lines gained and lost, and
// that a line the listing holds twice (a declaration in two build-tagged
// files) is neither gained nor lost.
func TestCompare(t *testing.T) {
	got := "func A()\nfunc B()\nfunc B()\nfunc C()"
	want := "func A()\nfunc B()\nfunc B()\nfunc D()"
	diffs := compare("api/x.txt", got, want)
	if strings.Join(diffs, "\n") != "api/x.txt: + func D()\napi/x.txt: - func C()" {
		t.Errorf("compare = %q, want D gained and C lost, nothing of B", diffs)
	}
	if diffs := compare("api/x.txt", "func B()", "func B()\nfunc B()"); len(diffs) != 0 {
		t.Errorf("a line listed twice against once: %q, want no difference", diffs)
	}
}
