// Command timeline draws the README's timeline figures, one SVG per
// strategy, from the library itself: every timestamp, expiry and GC instant
// in them comes from package ttl, so the pictures cannot drift from the
// code. Run it through go generate at the repository root:
//
//	go run ./cmd/timeline -out docs
//
// The output is the same bytes on every run; a test compares it with the
// committed files.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

// figures are the files the command writes, each with the function that
// draws it.
func figures() []figure {
	return []figure{
		{"onesecond.svg", oneSecondFigure},
		{"default-expiration.svg", defaultFigure},
		{"sequence-numbers.svg", seqnumFigure},
	}
}

// A figure is one file of the output.
type figure struct {
	name string
	draw func() ([]byte, error)
}

func main() {
	out := flag.String("out", "docs", "directory to write the SVG files to")
	flag.Parse()
	if err := generate(*out); err != nil {
		fmt.Fprintln(os.Stderr, "timeline:", err)
		os.Exit(1)
	}
}

// generate writes every figure into dir.
func generate(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range figures() {
		svg, err := f.draw()
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, f.name), svg, 0o644); err != nil {
			return err
		}
	}
	return nil
}
