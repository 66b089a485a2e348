// Command apicheck records the public surface of the module's packages, as
// Go's own api/ files record the standard library's: one line for every
// exported const, var, type, field, function and method, in one file per
// package under api/. A change to the surface is then a reviewed diff of
// those files, never an accident.
//
//	go run ./cmd/apicheck              # fails, listing the differences, if api/ is out of date
//	go run ./cmd/apicheck -write       # rewrites api/ from the code
//	go run ./cmd/apicheck -module beam # the same for the Beam module, in beam/api/
//
// It reads the source with go/parser and prints declarations as written
// (parameter names dropped), without type-checking, so that every Go
// version lists the same surface. Internal packages, main packages and
// tests are not part of it. It also prints how many names each package
// exports (functions, methods, types, variables and constants; not
// fields, nor the methods an interface declares, which come with its
// type), the measure the package's size is kept to.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

func main() { os.Exit(apicheck(os.Args[1:], os.Stdout, os.Stderr)) }

// apicheck runs the command with args and returns its exit status: 0 when
// the listing is up to date (or rewritten), 1 when it differs, 2 when the
// module cannot be listed.
func apicheck(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("apicheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	module := fs.String("module", ".", "the `directory` of the module whose packages to list")
	write := fs.Bool("write", false, "rewrite the module's api/ files instead of checking them")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	diffs, counts, err := run(*module, *write)
	if err != nil {
		fmt.Fprintln(stderr, "apicheck:", err)
		return 2
	}
	for _, c := range counts {
		fmt.Fprintf(stdout, "%s: %d exported names\n", c.pkg, c.names)
	}
	if len(diffs) == 0 {
		return 0
	}
	for _, d := range diffs {
		fmt.Fprintln(stderr, d)
	}
	fmt.Fprintf(stderr, "apicheck: the public surface differs from %s; if the change is meant, run go run ./cmd/apicheck -write%s and commit it\n",
		filepath.Join(*module, "api"), moduleFlag(*module))
	return 1
}

func moduleFlag(module string) string {
	if module == "." {
		return ""
	}
	return " -module " + module
}
