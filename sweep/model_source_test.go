package sweep_test

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
)

// sourceOf names the code a model run tested: a digest of the Go files
// (tests among them) of this package, of package scan and of the module's
// root package, with the Go version and whether the race detector ran.
// A divergence printed with it can be traced to the tree that produced
// it (the same files give the same digest); issue 26's could not, having
// come from a tree never committed.
func sourceOf() string {
	var files []string
	for _, dir := range []string{".", "../scan", ".."} {
		names, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		files = append(files, names...)
	}
	sort.Strings(files)
	h := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return fmt.Sprintf("source unknown (%v)", err)
		}
		fmt.Fprintf(h, "%s %d\n", filepath.ToSlash(f), len(b))
		h.Write(b)
	}
	return fmt.Sprintf("source %x of %d files, %s, race %v", h.Sum(nil)[:8], len(files), runtime.Version(), raceDetector)
}
