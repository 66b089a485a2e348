package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// maxDocLines bounds the doc comment of an exported name: what it does,
// when it fails, its concurrency. Rationale and costs go to docs/ or
// DESIGN.md, linked.
const maxDocLines = 15

// TestDocCommentsShort fails for every exported name of the repository's
// packages (every module's; not tests, internal or main packages) whose
// doc comment runs past maxDocLines lines, so that none drifts back.
func TestDocCommentsShort(t *testing.T) {
	long, err := longDocs("../..", maxDocLines)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range long {
		t.Error(l)
	}
}

// longDocs returns "file:line: Name: N lines" for each exported
// declaration under root whose doc comment is longer than max lines.
func longDocs(root string, max int) ([]string, error) {
	var out []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || name == "internal" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil
		}
		check := func(doc *ast.CommentGroup, what string) {
			if doc == nil {
				return
			}
			if n := len(strings.Split(strings.TrimSpace(doc.Text()), "\n")); n > max {
				rel, _ := filepath.Rel(root, path)
				out = append(out, fmt.Sprintf("%s:%d: %s: %d lines of doc comment, over %d", rel, fset.Position(doc.Pos()).Line, what, n, max))
			}
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Name.IsExported() && (d.Recv == nil || exportedRecv(d.Recv)) {
					check(d.Doc, funcName(d))
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					doc := d.Doc
					var names []*ast.Ident
					switch s := spec.(type) {
					case *ast.TypeSpec:
						names = []*ast.Ident{s.Name}
						if s.Doc != nil {
							doc = s.Doc
						}
					case *ast.ValueSpec:
						names = s.Names
						if s.Doc != nil {
							doc = s.Doc
						}
					}
					for _, n := range names {
						if n.IsExported() {
							check(doc, n.Name)
							break
						}
					}
				}
			}
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// exportedRecv reports whether a method's receiver type is exported.
func exportedRecv(recv *ast.FieldList) bool {
	e := recv.List[0].Type
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	switch x := e.(type) {
	case *ast.IndexExpr:
		e = x.X
	case *ast.IndexListExpr:
		e = x.X
	}
	id, ok := e.(*ast.Ident)
	return ok && id.IsExported()
}

// funcName returns Name or Recv.Name.
func funcName(d *ast.FuncDecl) string {
	if d.Recv == nil {
		return d.Name.Name
	}
	e := d.Recv.List[0].Type
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name + "." + d.Name.Name
	}
	return d.Name.Name
}
