package inputs_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// foreignStrategy is a package outside ttl with a type that has every
// exported method of ttl.Strategy, used where a Strategy is wanted.
const foreignStrategy = `package sealprobe

import (
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
)

type foreign struct{}

func (foreign) Timestamp(time.Time, ttl.Lifetime) (bigtable.Timestamp, error) { return 0, nil }
func (foreign) Filter(time.Time) bigtable.Filter                              { return bigtable.PassAllFilter() }
func (foreign) GCPolicy() bigtable.GCPolicy                                   { return bigtable.NoGcPolicy() }
func (foreign) ExpiresAt(bigtable.Timestamp) (time.Time, bool)                { return time.Time{}, false }
func (foreign) Versions() (int, bool)                                         { return 0, false }
func (foreign) String() string                                                { return "foreign" }

var api bigtable.TableAPI

var _, _ = ttl.NewTable(api, map[string]ttl.Strategy{"sess": foreign{}})
`

// compileForeign builds foreignStrategy as a package of this module, added
// by an overlay so that nothing is written into the source tree, and
// returns the compiler's output. It skips the test where no go command
// is at hand.
func compileForeign(t *testing.T) (string, error) {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to compile with:", err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(wd, "..", "..") // the module's root
	dir := t.TempDir()
	src := filepath.Join(dir, "probe.go")
	if err := os.WriteFile(src, []byte(foreignStrategy), 0o644); err != nil {
		t.Fatal(err)
	}
	overlay, err := json.Marshal(map[string]map[string]string{
		"Replace": {filepath.Join(root, "internal", "sealprobe", "probe.go"): src},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "overlay.json"), overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goCmd, "build", "-overlay", filepath.Join(dir, "overlay.json"), "./internal/sealprobe")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// notImplemented is the compiler's refusal of a foreign Strategy.
var notImplemented = regexp.MustCompile(`foreign does not implement ttl\.Strategy \(missing method [a-z]\w*\)`)

// TestStrategyIsSealed checks that a Strategy cannot be written outside the
// package: a type with every exported method fails to compile where a
// Strategy is wanted, for want of an unexported one.
func TestStrategyIsSealed(t *testing.T) {
	out, err := compileForeign(t)
	if err == nil {
		t.Fatalf("a foreign Strategy compiled:\n%s", out)
	}
	if !notImplemented.MatchString(out) {
		t.Fatalf("the build failed for another reason:\n%s", out)
	}
}

// sealedOutcome is docs/errors.md's row for a foreign Strategy: the compiler's
// refusal.
func sealedOutcome(t *testing.T) outcome {
	t.Helper()
	out, err := compileForeign(t)
	refusal := notImplemented.FindString(out)
	if err == nil || refusal == "" {
		t.Errorf("a foreign Strategy: build error %v, output:\n%s", err, out)
	}
	input := "`" + strings.TrimSpace(strings.TrimPrefix(foreignStrategy[strings.Index(foreignStrategy, "var _, _ = "):], "var _, _ = ")) + "`"
	return outcome{"strategy from outside the package", input, "does not compile: `" + refusal + "`", "nothing (never runs)"}
}
