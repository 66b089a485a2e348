// Package serve holds what the command needs to run as a service: an HTTP
// server of probes and metrics, the meter provider whose exporters feed
// it (Prometheus exposition, OTLP push), and structured logs. It is the
// command's, in the command's module, so that no exporter enters the
// library's module graph; docs/metrics.md ("Scraping and probes") says
// what it serves.
package serve
