// Package check verifies what it takes to deploy cellttl's sweeper
// (the repository's deploy/ folder) against the sources it depends on:
// the Prometheus rules and the Grafana dashboard query only metrics the
// catalogue of docs/metrics.md emits, the Kubernetes manifests parse into
// their typed objects and run the command with flags it takes, and the
// Dockerfile's build line builds the binary it copies. Command deploycheck
// runs every check over a checkout; CI runs it (docs/deploy.md).
//
// Each function returns every fault it finds, joined (errors.Join), each
// naming the file and the metric, flag or field at fault; nil when there
// is none. The functions hold no state and are safe for concurrent use.
package check
