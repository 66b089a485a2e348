package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/text"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/policy/terraform"
)

// Terraform: ensure -format terraform prints the google_bigtable_gc_policy
// resources of the families as they must be; check -terraform FILE reads a
// plan or a state (terraform show -json) and says where Terraform would
// set a policy that destroys data.

// terraformEnsureHelp is the paragraph of ensure's help on -format terraform.
const terraformEnsureHelp = `

-format terraform prints, instead of the plan, the google_bigtable_gc_policy
resources that set each family's policy as its strategy needs it, for teams
that manage GC policies with Terraform (whose next apply would otherwise put
its own policies back): with deletion_policy = "ABANDON", and a comment
listing the column_family blocks the table's google_bigtable_table must hold
(type = "intsum" for a counter). The table is read and scanned as for any
plan: a change that would lose data, or a family to create without -create,
is refused (exit 3) and no resource is printed. Without -apply nothing is
changed: the resources are for Terraform to apply; with -apply the changes
are made and the resources printed, for the configuration to keep them.
With -schedule TABLE, the resource of the schedule table's family follows
(the schedule is set up or refused as without -format terraform).
-terraform-table NAME refers to google_bigtable_table.NAME for the table's
table, instance_name and project; -ignore-warnings writes ignore_warnings
= true.
It cannot be used with -sample, which decides nothing. The guide:
docs/families.md.`

// terraformCheckHelp is the paragraph of check's help on -terraform.
const terraformCheckHelp = `

-terraform FILE reads FILE, the output of terraform show -json of a plan
(what the apply would do) or of a state (what every apply keeps setting),
instead of the table: it contacts no server. It prints, for each family,
each google_bigtable_gc_policy of the table and the policy it sets, and
what the table's google_bigtable_table does to the family. A resource is
the table's when it names the table, and -project and -instance if it
names a project or instance. A family no resource sets is "unmanaged":
Terraform leaves it as it is. It exits 3 when Terraform would destroy data
(a shorter age, fewer versions, an age on a seqnum family, a version limit
on a family that lives by time, a grace cut short, a family or the table
deleted, a family the table's column_family blocks do not list) or leave a
family otherwise than its strategy needs (another policy or kind of cell,
what the plan knows only after apply); 3 when no resource manages the
table, listing the tables the file has; and 2 when FILE is not such JSON.`

// terraformEnsureFlags defines ensure's Terraform flags: -format terraform,
// and -terraform-table.
func terraformEnsureFlags(fs *flag.FlagSet, c *config) {
	c.format.terraformOK = true
	fs.StringVar(&c.terraformTable, "terraform-table", "", "with -format terraform, refer to the resource google_bigtable_table.`NAME`\n"+
		"for table, instance_name and project, instead of naming them")
}

// terraformCheckFlags defines check's -terraform.
func terraformCheckFlags(fs *flag.FlagSet, c *config) {
	fs.StringVar(&c.terraformFile, "terraform", "", "read the Terraform plan or state in this `file` (terraform show -json)\n"+
		"instead of the table, and report where Terraform would destroy data")
}

// terraformUsage refuses the flags -format terraform cannot take,
// -terraform-table without it, and what the resources cannot be written
// for, before the table is read; exitOK otherwise.
func terraformUsage(c *config, strategies map[string]ttl.Strategy, stderr io.Writer) int {
	switch {
	case c.format.terraform && c.sample > 0:
		fmt.Fprintln(stderr, "cellttl ensure: -sample gives estimates, which decide nothing; -format terraform prints resources only for a plan that decides: drop -sample")
		return exitUsage
	case !c.format.terraform && c.terraformTable != "":
		fmt.Fprintln(stderr, "cellttl ensure: -terraform-table needs -format terraform")
		return exitUsage
	case c.format.terraform:
		if _, err := terraform.GCPolicies(strategies, terraformOptions(c)); err != nil {
			return fail(stderr, "ensure", err)
		}
	}
	return exitOK
}

// terraformOptions are the options of the resources ensure prints.
func terraformOptions(c *config) terraform.Options {
	opts := terraform.Options{Instance: c.instance, Table: c.table, Project: c.project, IgnoreWarnings: c.ignoreWarnings}
	if c.terraformTable != "" {
		opts.TableResource = "google_bigtable_table." + c.terraformTable
	}
	return opts
}

// ensureTerraform ends ensure -format terraform: a plan refused or failed
// is reported as ensure reports it, with no resource printed; otherwise
// the resources go to stdout, and what was done to stderr.
func ensureTerraform(ctx context.Context, c *config, k *clients, strategies map[string]ttl.Strategy, plan *policy.Plan, err error, stdout, stderr io.Writer) int {
	if err != nil {
		return ensureStatus(c, plan, err, io.Discard, stderr)
	}
	hcl, err := terraform.GCPolicies(strategies, terraformOptions(c))
	if err != nil {
		return fail(stderr, "ensure", err)
	}
	if c.schedule != "" {
		more, code := scheduleTerraform(ctx, c, k, strategies, stderr)
		if code != exitOK {
			return code
		}
		hcl += "\n" + more
	}
	fmt.Fprint(stdout, hcl)
	if plan.DryRun {
		fmt.Fprintln(stderr, "cellttl ensure: dry run, nothing changed: add these resources to the Terraform configuration, and terraform apply sets the policies")
	} else {
		fmt.Fprintln(stderr, "cellttl ensure: the policies are set: add these resources to the Terraform configuration, so that terraform apply keeps them")
	}
	return exitOK
}

// scheduleTerraform ensures the schedule table as ensure -schedule does
// (a dry run without -apply), and returns the resource of its family, or
// the exit status of a refusal or failure it printed.
func scheduleTerraform(ctx context.Context, c *config, k *clients, strategies map[string]ttl.Strategy, stderr io.Writer) (string, int) {
	sched, serr := ensureSchedulePlan(ctx, c, k.admin, k.data, strategies, stderr)
	if code, done := scheduleStatus(sched, serr, stderr); done {
		return "", code
	}
	opts := terraform.Options{Instance: c.instance, Table: c.schedule, Project: c.project, IgnoreWarnings: c.ignoreWarnings}
	hcl, err := terraform.SchedulePolicy(c.table, strategies, opts)
	if err != nil {
		return "", fail(stderr, "ensure", err)
	}
	return hcl, exitOK
}

// checkTerraform is check -terraform FILE: it reads the file, not the
// table.
func checkTerraform(c *config, strategies map[string]ttl.Strategy, stdout, stderr io.Writer) int {
	f, err := os.Open(c.terraformFile)
	if err != nil {
		fmt.Fprintf(stderr, "cellttl check: -terraform %s: %v\n", c.terraformFile, err)
		return exitUsage
	}
	defer f.Close()
	report, err := terraform.Check(f, terraform.Where{Project: c.project, Instance: c.instance, Table: c.table}, strategies)
	if report == nil {
		fmt.Fprintf(stderr, "cellttl check: -terraform %s: %v\n", c.terraformFile, err)
		if errors.Is(err, terraform.ErrNotTerraform) {
			fmt.Fprintln(stderr, "cellttl check: give the output of terraform show -json PLANFILE (a plan) or terraform show -json (the state)")
		}
		return exitUsage
	}
	if c.format.json {
		if err := printJSON(stdout, struct {
			File string `json:"file"`
			*terraform.Report
			Error string `json:"error,omitempty"`
		}{c.terraformFile, report, errText(err)}); err != nil {
			return fail(stderr, "check", err)
		}
	} else if !errors.Is(err, terraform.ErrNoResource) {
		renderTerraform(stdout, c.terraformFile, report)
	}
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "cellttl check: %v\n", err)
	if errors.Is(err, terraform.ErrNoResource) {
		fmt.Fprintln(stderr, "cellttl check: check -table, -project and -instance, and that the file is the plan or state of the configuration that manages the table")
		return exitMismatch
	}
	if lost := report.Losses(); len(lost) > 0 {
		fmt.Fprintf(stderr, "cellttl check: Terraform would destroy data (%s); \"cellttl ensure -format terraform\" prints the resources as they must be\n",
			text.Plural(len(lost), "finding", "findings"))
	} else {
		fmt.Fprintln(stderr, "cellttl check: Terraform would set policies that differ from the strategies'; \"cellttl ensure -format terraform\" prints the resources as they must be")
	}
	return exitMismatch
}

// renderTerraform prints a report as a table, one finding a line, and the
// reasons of those that are not as wanted.
func renderTerraform(w io.Writer, file string, r *terraform.Report) {
	what := "state"
	if r.Plan {
		what = "plan"
	}
	fmt.Fprintf(w, "table %q in the Terraform %s %s\n", r.Table, what, file)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FAMILY\tSTRATEGY\tRESOURCE\tSETS\tWANT\tSTATUS")
	for _, f := range r.Findings {
		status := string(f.Kind)
		if f.Loss {
			status = "DATA LOSS: " + status
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", cmp.Or(f.Family, "?"), cmp.Or(f.Strategy, "-"), cmp.Or(f.Address, "-"), cmp.Or(f.Found, "-"), cmp.Or(f.Want, "-"), status)
	}
	tw.Flush()
	for _, f := range r.Findings {
		if f.Kind.Mismatch() {
			fmt.Fprintf(w, "  %s: %s\n", cmp.Or(f.Family, f.Address), f.Reason)
		}
	}
}

// errText is the error's message, "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
