package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl/internal/emulator"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the outputs of the commands of docs/families.md's Terraform section")

// TestTerraformDocs runs every command of the section "Terraform" of
// docs/families.md, in process, on an emulator holding the table it
// describes and on the library's fixtures for the files it names, and
// checks that the section shows each one's output (stdout, then stderr)
// and exit status as they are. -update-docs rewrites them.
func TestTerraformDocs(t *testing.T) {
	e := emulator.StartForTest(t)
	t.Setenv("BIGTABLE_EMULATOR_HOST", e.Addr)
	ctx := context.Background()
	admin, err := bigtable.NewAdminClient(ctx, "my-project", "my-instance")
	require.NoError(t, err)
	defer admin.Close()
	require.NoError(t, admin.CreateTableFromConf(ctx, &bigtable.TableConf{TableID: "events", ColumnFamilies: map[string]bigtable.Family{
		"clicks": {GCPolicy: bigtable.NoGcPolicy()},
		"sess":   {GCPolicy: bigtable.NoGcPolicy()},
		"hits":   {GCPolicy: bigtable.NoGcPolicy(), ValueType: bigtable.AggregateType{Input: bigtable.Int64Type{}, Aggregator: bigtable.SumAggregator{}}},
	}}))
	files := map[string]string{"state.json": showFile("state-shrink.json"), "plan.json": showFile("plan-shrink.json")}

	path := filepath.Join("..", "..", "docs", "families.md")
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	doc := string(raw)
	start := strings.Index(doc, "\n## Terraform\n")
	require.NotEqual(t, -1, start, "docs/families.md has no section Terraform")
	end := len(doc)
	if next := strings.Index(doc[start+1:], "\n## "); next >= 0 {
		end = start + 1 + next
	}
	section := doc[start:end]

	var out strings.Builder
	commands := 0
	lines := strings.SplitAfter(section, "\n")
	for i := 0; i < len(lines); i++ {
		out.WriteString(lines[i])
		if lines[i] != "```\n" || i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "$ ") {
			continue
		}
		// A block of commands: rerun each, replacing what it shows.
		code := 0
		for i++; i < len(lines) && lines[i] != "```\n"; i++ {
			cmd, ok := strings.CutPrefix(lines[i], "$ ")
			if !ok {
				continue // a line of output, replaced below
			}
			out.WriteString(lines[i])
			args := strings.Fields(cmd)
			switch {
			case cmd == "echo $?\n":
				fmt.Fprintf(&out, "%d\n", code)
			case args[0] == "cellttl":
				for j, a := range args {
					if f, ok := files[a]; ok {
						args[j] = f
					}
				}
				commands++
				var stdout, stderr string
				stdout, stderr, code = cellttl(args[1:]...)
				for name, f := range files {
					stdout, stderr = strings.ReplaceAll(stdout, f, name), strings.ReplaceAll(stderr, f, name)
				}
				out.WriteString(stdout + stderr)
			default:
				t.Fatalf("docs/families.md: %q is not a cellttl command", cmd)
			}
		}
		if i < len(lines) {
			out.WriteString(lines[i])
		}
	}
	assert.Equal(t, 3, commands, "the section's cellttl commands")
	if *updateDocs {
		require.NoError(t, os.WriteFile(path, []byte(doc[:start]+out.String()+doc[end:]), 0o644))
		return
	}
	assert.Equal(t, section, out.String(), "docs/families.md's Terraform section differs from what its commands print; -update-docs rewrites it")
}
