package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// docs is where go generate writes the figures, seen from this package.
var docs = filepath.Join("..", "..", "docs")

// TestCommittedFiguresAreCurrent fails when the library or the generator
// changed and the committed figures were not regenerated.
func TestCommittedFiguresAreCurrent(t *testing.T) {
	dir := t.TempDir()
	if err := generate(dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range figures() {
		got, err := os.ReadFile(filepath.Join(dir, f.name))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(docs, f.name))
		if err != nil {
			t.Fatalf("%v; run go generate at the repository root", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("docs/%s is not what the generator draws now (first difference: %s); run go generate at the repository root and commit the result",
				f.name, firstDifference(got, want))
		}
	}
}

// TestGenerateIsDeterministic draws every figure twice: the same bytes, or
// CI could never tell a stale figure from a fresh one.
func TestGenerateIsDeterministic(t *testing.T) {
	for _, f := range figures() {
		a, err := f.draw()
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		b, err := f.draw()
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two runs differ at %s", f.name, firstDifference(a, b))
		}
	}
}

// TestFiguresAreSelfContained checks that each figure is well-formed SVG
// with an accessible title and description, and loads nothing: no script,
// no image, no font or style sheet, no link outside the document.
func TestFiguresAreSelfContained(t *testing.T) {
	for _, f := range figures() {
		svg, err := f.draw()
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		d := xml.NewDecoder(bytes.NewReader(svg))
		d.Strict = true
		var seen []string
		for {
			tok, err := d.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: not well-formed: %v", f.name, err)
			}
			el, ok := tok.(xml.StartElement)
			if !ok {
				continue
			}
			name := el.Name.Local
			seen = append(seen, name)
			switch name {
			case "script", "image", "foreignObject", "style", "use", "a", "font-face":
				t.Errorf("%s: has a <%s> element", f.name, name)
			}
			for _, a := range el.Attr {
				if a.Name.Local == "xmlns" {
					continue
				}
				if strings.Contains(a.Value, "://") || a.Name.Local == "href" ||
					(strings.Contains(a.Value, "url(") && !strings.HasPrefix(a.Value, "url(#")) {
					t.Errorf("%s: <%s %s=%q> refers outside the document", f.name, name, a.Name.Local, a.Value)
				}
			}
		}
		if len(seen) < 3 || seen[0] != "svg" || seen[1] != "title" || seen[2] != "desc" {
			t.Errorf("%s: starts with %v, want svg, title, desc", f.name, seen[:min(3, len(seen))])
		}
	}
}

// firstDifference describes where a and b first differ.
func firstDifference(a, b []byte) string {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d: %q vs %q", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("%d lines vs %d", len(al), len(bl))
}
