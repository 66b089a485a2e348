package main

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// A count is how many names a package exports.
type count struct {
	pkg   string
	names int
}

// run lists the surface of every package of the module in dir and checks
// it against dir/api (or, with write, rewrites dir/api). It returns the
// differences, one line each, and each package's count of names.
func run(dir string, write bool) ([]string, []count, error) {
	modPath, err := modulePath(filepath.Join(dir, "go.mod"))
	if err != nil {
		return nil, nil, err
	}
	surfaces, err := listModule(dir, modPath)
	if err != nil {
		return nil, nil, err
	}
	var counts []count
	var diffs []string
	apiDir := filepath.Join(dir, "api")
	files := map[string]bool{}
	for _, s := range surfaces {
		counts = append(counts, count{s.path, s.names})
		name := fileName(modPath, s.path)
		files[name] = true
		path := filepath.Join(apiDir, name)
		want := strings.Join(s.lines, "\n") + "\n"
		if write {
			if err := os.MkdirAll(apiDir, 0o755); err != nil {
				return nil, nil, err
			}
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				return nil, nil, err
			}
			continue
		}
		got, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			diffs = append(diffs, fmt.Sprintf("%s: missing (package %s)", path, s.path))
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		diffs = append(diffs, compare(path, string(got), want)...)
	}
	stale, err := staleFiles(apiDir, files, write)
	if err != nil {
		return nil, nil, err
	}
	return append(diffs, stale...), counts, nil
}

// staleFiles reports (or, with write, removes) the api/ files of packages
// that no longer exist.
func staleFiles(apiDir string, files map[string]bool, write bool) ([]string, error) {
	entries, err := os.ReadDir(apiDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var stale []string
	for _, e := range entries {
		if files[e.Name()] || !strings.HasSuffix(e.Name(), ".txt") {
			continue
		}
		path := filepath.Join(apiDir, e.Name())
		if write {
			if err := os.Remove(path); err != nil {
				return nil, err
			}
			continue
		}
		stale = append(stale, fmt.Sprintf("%s: no package has this surface any more", path))
	}
	return stale, nil
}

// compare returns the lines of want missing from got ("+", the surface
// gained them) and those of got missing from want ("-", lost).
func compare(path, got, want string) []string {
	have := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(got), "\n") {
		have[l] = true
	}
	// A line may stand twice (a declaration in two build-tagged files):
	// each is compared as a set, so that the second is not "gained".
	var diffs []string
	wanted := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(want), "\n") {
		if !have[l] && !wanted[l] {
			diffs = append(diffs, fmt.Sprintf("%s: + %s", path, l))
		}
		wanted[l] = true
	}
	var lost []string
	for l := range have {
		if !wanted[l] {
			lost = append(lost, fmt.Sprintf("%s: - %s", path, l))
		}
	}
	sort.Strings(lost)
	return append(diffs, lost...)
}

// fileName names a package's api/ file: its path in the module, slashes
// as dashes; the module's root package is its last element.
func fileName(modPath, pkgPath string) string {
	rel := strings.TrimPrefix(strings.TrimPrefix(pkgPath, modPath), "/")
	if rel == "" {
		rel = modPath[strings.LastIndex(modPath, "/")+1:]
	}
	return strings.ReplaceAll(rel, "/", "-") + ".txt"
}

// modulePath reads the module path from a go.mod file.
func modulePath(goMod string) (string, error) {
	b, err := os.ReadFile(goMod)
	if err != nil {
		return "", err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`), nil
		}
	}
	return "", fmt.Errorf("%s names no module", goMod)
}

// A surface is one package's exported declarations.
type surface struct {
	path  string   // import path
	lines []string // sorted
	names int      // funcs, methods, types, vars and consts
}

// listModule lists the surface of every package of the module rooted at
// dir: every directory below it with non-test Go files, except internal,
// testdata, hidden and vendored ones, nested modules, and main packages.
func listModule(dir, modPath string) ([]surface, error) {
	var out []surface
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		name := d.Name()
		if path != dir {
			if name == "internal" || name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		pkgPath := modPath
		if rel != "." {
			pkgPath += "/" + filepath.ToSlash(rel)
		}
		s, ok, err := listPackage(path, pkgPath)
		if ok {
			out = append(out, s)
		}
		return err
	})
	return out, err
}

// listPackage lists the surface of the package in dir, and false when dir
// holds none or a main package.
func listPackage(dir, pkgPath string) (surface, bool, error) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.SkipObjectResolution)
	if err != nil {
		return surface{}, false, err
	}
	for name, pkg := range pkgs {
		if name == "main" {
			continue
		}
		l := lister{fset: fset, prefix: "pkg " + pkgPath + ", "}
		files := make([]string, 0, len(pkg.Files))
		for f := range pkg.Files {
			files = append(files, f)
		}
		sort.Strings(files)
		for _, f := range files {
			if err := l.file(pkg.Files[f]); err != nil {
				return surface{}, false, err
			}
		}
		sort.Strings(l.lines)
		return surface{path: pkgPath, lines: l.lines, names: l.names}, true, nil
	}
	return surface{}, false, nil
}

// A lister collects the lines of one package.
type lister struct {
	fset   *token.FileSet
	prefix string
	lines  []string
	names  int
}

func (l *lister) add(line string) { l.lines = append(l.lines, l.prefix+line) }

// expr prints a type or an expression as written.
func (l *lister) expr(e ast.Expr) string {
	var b bytes.Buffer
	printer.Fprint(&b, l.fset, e)
	return b.String()
}
