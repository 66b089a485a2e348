// Command deploycheck checks the repository's deploy/ folder against the
// sources it depends on (package check): the alert rules and the
// dashboard against docs/metrics.md, the Dockerfile by running its build
// line, the manifests against "cellttl sweep -h", and the commands of
// docs/deploy.md. It exits 1 naming every fault, 0 when there is none.
//
//	cd deploy/check && go run ./cmd/deploycheck -root ../..
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/cellttl/ttl/deploy/check"
)

func main() {
	root := flag.String("root", "../..", "the repository's root")
	flag.Parse()
	if err := check.Run(context.Background(), *root, check.Repository, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "FAILED:\n%v\n", err)
		os.Exit(1)
	}
}
