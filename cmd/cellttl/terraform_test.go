package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/policy/terraform"
)

// terraformFamilies are the three strategies, a grace and a counter, as
// flags and as strategies.
var terraformFamilies = []string{"-family", "sess=onesecond", "-family", "clicks=default:7d", "-family", "seq=seqnum:3",
	"-family", "swept=grace:90s:default:36h", "-family", "hits=counter:default:1h"}

func terraformStrategies() map[string]ttl.Strategy {
	return map[string]ttl.Strategy{
		"sess": ttl.OneSecond(), "clicks": ttl.DefaultExpiration(7 * 24 * time.Hour), "seq": ttl.SequenceNumbers(3),
		"swept": ttl.Grace(ttl.DefaultExpiration(36*time.Hour), 90*time.Second), "hits": ttl.Counter(ttl.DefaultExpiration(time.Hour)),
	}
}

// showFile is a file of the library's Terraform fixtures.
func showFile(name string) string {
	return filepath.Join("..", "..", "policy", "terraform", "testdata", "show", name)
}

// TestEnsureTerraform checks ensure -format terraform: a dry run prints
// the library's resources and changes nothing (here, a table to create
// stays uncreated); -terraform-table and -ignore-warnings reach them.
func TestEnsureTerraform(t *testing.T) {
	e, _ := startEmulator(t, map[string]bigtable.GCPolicy{"a": nil})
	args := append([]string{"ensure", "-project", emulator.Project, "-instance", emulator.Instance, "-table", "events", "-create",
		"-format", "terraform", "-quiet"}, terraformFamilies...)
	stdout, stderr, code := cellttl(args...)
	require.Equal(t, exitOK, code, stderr)
	want, err := terraform.GCPolicies(terraformStrategies(), terraform.Options{Instance: emulator.Instance, Table: "events", Project: emulator.Project})
	require.NoError(t, err)
	assert.Equal(t, want, stdout)
	assert.Contains(t, stdout, `resource "google_bigtable_gc_policy" "events_clicks" {`)
	assert.Contains(t, stderr, "dry run, nothing changed: add these resources to the Terraform configuration")
	tables, err := e.Admin.Tables(context.Background())
	require.NoError(t, err)
	assert.NotContains(t, tables, "events")

	stdout, _, code = cellttl(append(args, "-terraform-table", "events", "-ignore-warnings")...)
	require.Equal(t, exitOK, code)
	want, err = terraform.GCPolicies(terraformStrategies(), terraform.Options{Instance: emulator.Instance, Table: "events", Project: emulator.Project,
		TableResource: "google_bigtable_table.events", IgnoreWarnings: true})
	require.NoError(t, err)
	assert.Equal(t, want, stdout)
}

// TestEnsureTerraformSchedule checks ensure -format terraform -schedule:
// after the table's resources, the schedule table's family's resource,
// with the policy its families need; a dry run creates nothing, -apply
// sets it up; -terraform-table refers to the data table only.
func TestEnsureTerraformSchedule(t *testing.T) {
	e, _ := startEmulator(t, map[string]bigtable.GCPolicy{"sess": nil})
	args := with("ensure", "-family", "sess=grace:1h:onesecond", "-schedule", "sched", "-create", "-format", "terraform", "-quiet")
	stdout, stderr, code := cellttl(args...)
	require.Equal(t, exitOK, code, stderr)
	strategies := map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), time.Hour)}
	data, err := terraform.GCPolicies(strategies, terraform.Options{Instance: emulator.Instance, Table: "t", Project: emulator.Project})
	require.NoError(t, err)
	want, err := terraform.SchedulePolicy("t", strategies, terraform.Options{Instance: emulator.Instance, Table: "sched", Project: emulator.Project})
	require.NoError(t, err)
	assert.Equal(t, data+"\n"+want, stdout)
	assert.Contains(t, stdout, `resource "google_bigtable_gc_policy" "sched_e" {`)
	assert.Contains(t, stderr, "dry run, nothing changed")
	tables, err := e.Admin.Tables(context.Background())
	require.NoError(t, err)
	assert.NotContains(t, tables, "sched")

	stdout, stderr, code = cellttl(append(args, "-apply", "-terraform-table", "t")...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, `table           = google_bigtable_table.t.name`)
	assert.Contains(t, stdout, `table           = "sched"`)
	_, stderr, code = cellttl(with("check", "-family", "sess=grace:1h:onesecond", "-schedule", "sched")...)
	assert.Equal(t, exitOK, code, stderr)
}

// TestEnsureTerraformApply checks that -apply makes the changes and prints
// the resources, for the configuration to keep them.
func TestEnsureTerraformApply(t *testing.T) {
	e, _ := startEmulator(t, map[string]bigtable.GCPolicy{"clicks": nil})
	stdout, stderr, code := cellttl(with("ensure", "-family", "clicks=default:7d", "-format", "terraform", "-apply", "-quiet")...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "duration = \"168h\"")
	assert.Contains(t, stderr, "the policies are set: add these resources to the Terraform configuration, so that terraform apply keeps them")
	assert.Equal(t, "age() > 7d", policies(t, e.Admin)["clicks"])
}

// TestEnsureTerraformRefused checks that a change that would lose data is
// refused as ensure refuses it, exit 3, and no resource is printed: a team
// that applied them would lose the data ensure protects.
func TestEnsureTerraformRefused(t *testing.T) {
	_, raw := startEmulator(t, map[string]bigtable.GCPolicy{"clicks": nil})
	put(t, raw, "r1", "clicks", "c", time.Now().Add(-30*24*time.Hour))
	stdout, stderr, code := cellttl(with("ensure", "-family", "clicks=default:7d", "-format", "terraform", "-quiet")...)
	assert.Equal(t, exitMismatch, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "refused, nothing changed; run again with -allow-data-loss")

	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{with("ensure", "-family", "clicks=default:7d", "-format", "terraform", "-sample", "0.5"), "-sample gives estimates"},
		{with("ensure", "-family", "clicks=default:7d", "-terraform-table", "events"), "-terraform-table needs -format terraform"},
		{with("ensure", "-family", "clicks=default:7d", "-format", "hcl"), "want text, json or terraform"},
		{with("check", "-family", "clicks=default:7d", "-format", "terraform"), "want text or json"},
		{with("ensure", "-family", "clicks=default:7d", "-format", "terraform", "-terraform-table", "9x"), `table resource "google_bigtable_table.9x"`},
	} {
		stdout, stderr, code := cellttl(tt.args...)
		assert.Equal(t, exitUsage, code, tt.args)
		assert.Empty(t, stdout, tt.args)
		assert.Contains(t, stderr, tt.msg, tt.args)
	}
}

// TestCheckTerraform checks check -terraform on files, without a server:
// a state in which Terraform would shrink a family's max age is data loss,
// exit 3, as text and as JSON; a plan too; a state that matches exits 0;
// a file that is not Terraform's JSON, or none, exits 2 naming it.
func TestCheckTerraform(t *testing.T) {
	t.Setenv("BIGTABLE_EMULATOR_HOST", "127.0.0.1:1") // nothing listens: check must not connect
	on := append([]string{"check", "-project", "my-project", "-instance", "my-instance", "-table", "events"}, terraformFamilies...)

	state := showFile("state-shrink.json")
	stdout, stderr, code := cellttl(append(on, "-terraform", state)...)
	assert.Equal(t, exitMismatch, code)
	assert.Contains(t, stdout, "table \"events\" in the Terraform state "+state)
	assert.Regexp(t, `clicks +DefaultExpiration\(168h0m0s\) +module.bigtable.google_bigtable_gc_policy.events_clicks +maxage=1d +maxage=7d +DATA LOSS: shorter-age`, stdout)
	assert.Regexp(t, `seq +SequenceNumbers\(3\) +module.bigtable.google_bigtable_gc_policy.events_seq +maxversions=3 +maxversions=3 +matches`, stdout)
	assert.Contains(t, stdout, "  clicks: an age shorter than the strategy's: GC deletes live cells before their expiry")
	assert.Contains(t, stderr, "ttl: change would delete or hide existing data")
	assert.Contains(t, stderr, "Terraform would destroy data (2 findings)")

	stdout, _, code = cellttl(append(on, "-terraform", state, "-format", "json")...)
	assert.Equal(t, exitMismatch, code)
	var report struct {
		File     string              `json:"file"`
		Plan     bool                `json:"plan"`
		Table    string              `json:"table"`
		Findings []terraform.Finding `json:"findings"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &report))
	assert.Equal(t, state, report.File)
	assert.Equal(t, "events", report.Table)
	require.Len(t, report.Findings, 5)
	assert.Equal(t, terraform.ShorterAge, report.Findings[0].Kind)
	assert.True(t, report.Findings[0].Loss)

	stdout, stderr, code = cellttl(append(on, "-terraform", showFile("plan-shrink.json"))...)
	assert.Equal(t, exitMismatch, code)
	assert.Contains(t, stdout, "in the Terraform plan")
	assert.Regexp(t, `seq +SequenceNumbers\(3\) +google_bigtable_table.events +- +- +DATA LOSS: family-deleted`, stdout)
	assert.Contains(t, stderr, "Terraform would destroy data (3 findings)")

	// The resources ensure prints, as a state holds them: no finding.
	ok := filepath.Join(t.TempDir(), "ok.json")
	require.NoError(t, os.WriteFile(ok, []byte(`{"format_version": "1.0", "values": {"root_module": {"resources": [
	  {"address": "google_bigtable_gc_policy.events_clicks", "mode": "managed", "type": "google_bigtable_gc_policy",
	   "values": {"project": "p", "instance_name": "my-instance", "table": "events", "column_family": "clicks", "deletion_policy": "ABANDON", "max_age": [{"duration": "168h"}]}}]}}}`), 0o644))
	stdout, stderr, code = cellttl("check", "-project", "p", "-instance", "my-instance", "-table", "events", "-family", "clicks=default:7d", "-terraform", ok)
	assert.Equal(t, exitOK, code, stderr)
	assert.Regexp(t, `clicks +DefaultExpiration\(168h0m0s\) +google_bigtable_gc_policy.events_clicks +maxage=7d +maxage=7d +matches`, stdout)
	assert.Empty(t, stderr)

	// Policies that differ without losing data: exit 3, said so.
	_, stderr, code = cellttl("check", "-project", "p", "-instance", "my-instance", "-table", "events", "-family", "clicks=default:1d", "-terraform", ok)
	assert.Equal(t, exitMismatch, code)
	assert.Contains(t, stderr, "Terraform would set policies that differ from the strategies'")

	// A mistyped table, or another project: no resource manages it, said
	// with the tables the file has, exit 3.
	for _, args := range [][]string{
		{"-project", "p", "-instance", "my-instance", "-table", "eventz"},
		{"-project", "other", "-instance", "my-instance", "-table", "events"},
	} {
		stdout, stderr, code = cellttl(append(append([]string{"check"}, args...), "-family", "clicks=default:7d", "-terraform", ok)...)
		assert.Equal(t, exitMismatch, code, args)
		assert.Empty(t, stdout, args)
		assert.Contains(t, stderr, `terraform: no resource manages the table: no resource of the Terraform state manages table "`, args)
		assert.Contains(t, stderr, `(the tables it has: "events")`, args)
		assert.NotContains(t, stderr, "unmanaged", args)
	}
	stdout, _, code = cellttl("check", "-project", "p", "-instance", "my-instance", "-table", "eventz", "-family", "clicks=default:7d", "-terraform", ok, "-format", "json")
	assert.Equal(t, exitMismatch, code)
	assert.Contains(t, stdout, `"tables": [`)
	assert.Contains(t, stdout, `"error": "terraform: no resource manages the table`)

	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte("this is not JSON"), 0o644))
	for file, msg := range map[string]string{
		bad:              "cellttl check: -terraform " + bad + ": ttl: invalid option: terraform: not a plan or state as terraform show -json prints it: it is not JSON",
		bad + ".missing": "cellttl check: -terraform " + bad + ".missing: open",
		"../../policy/terraform/testdata/provider-schema.json": "it is a provider schema",
	} {
		stdout, stderr, code := cellttl(append(on, "-terraform", file)...)
		assert.Equal(t, exitUsage, code, file)
		assert.Empty(t, stdout, file)
		assert.Contains(t, stderr, msg, file)
	}
}
