// Command cellttl, for the tests: the flags of "cellttl sweep" that the
// manifests use, the lease's and the metrics' among them, as Go's flag
// package prints them with -h.
package main

import (
	"flag"
	"os"
)

func main() {
	if len(os.Args) < 2 || os.Args[1] != "sweep" {
		os.Exit(2)
	}
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	for _, name := range []string{"project", "instance", "table", "family", "granularity", "every", "round-timeout",
		"margin", "checkpoint", "lease", "metrics-addr", "log-format", "format", "app-profile"} {
		fs.String(name, "", "a value")
	}
	fs.Bool("quiet", false, "report no progress")
	fs.Bool("delete", false, "delete the expired cells found")
	if err := fs.Parse(os.Args[2:]); err == flag.ErrHelp {
		os.Exit(0)
	} else if err != nil {
		os.Exit(2)
	}
}
