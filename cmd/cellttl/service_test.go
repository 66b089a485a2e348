package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// freeAddr returns a local address no one listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// get returns the status and body of GET url.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// TestSweepServesMetrics runs sweep -every -metrics-addr for two rounds on
// the in-process emulator and scrapes the server while it runs: /metrics
// holds the sweep's and its scans' instruments, /readyz turns ready once a
// round has ended, and the server is gone when the command returns.
func TestSweepServesMetrics(t *testing.T) {
	_, clock := startSweep(t, seeded)
	addr := freeAddr(t)
	base := "http://" + addr
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var metrics, ready1, ready2, ready3 string
	var code1, code2, code3 int
	out := &watchedOut{each: func(n int) {
		// Called as each round's report is written, before the round ends.
		if n == 1 {
			code1, ready1 = get(t, base+"/readyz")
			clock.Advance(time.Minute)
			return
		}
		code2, ready2 = get(t, base+"/readyz")
		_, metrics = get(t, base+"/metrics")
		clock.Advance(61 * time.Second) // past two periods of 30s
		code3, ready3 = get(t, base+"/readyz")
		cancel()
	}}
	c, err := parse(sweepCommand, append(on, "-family", "sess=onesecond", "-family", "clicks=default:1h", "-workers", "1",
		"-since", "2030-04-30T09:00:00Z", "-every", "30s", "-format", "json", "-metrics-addr", addr))
	require.NoError(t, err)
	var errs bytes.Buffer
	code := sweepCommand.run(ctx, c, out, &errs)
	require.Equal(t, exitOK, code, errs.String())

	assert.Equal(t, 503, code1)
	assert.Equal(t, "not ready: runs alone, no round finished yet\n", ready1)
	assert.Equal(t, 200, code2)
	assert.Equal(t, "ready: runs alone, last round finished 0s ago\n", ready2)
	assert.Equal(t, 503, code3)
	assert.Equal(t, "not ready: runs alone, last round finished 1m1s ago, more than two periods (1m0s)\n", ready3)
	for _, want := range []string{
		`cellttl_sweep_rounds_total{cellttl_outcome="complete",cellttl_table="t",otel_scope_name="github.com/cellttl/ttl/sweep"`,
		`cellttl_sweep_events_total{cellttl_family="sess",cellttl_table="t",`,
		`cellttl_sweep_delivery_delay_seconds_bucket{cellttl_family="sess",cellttl_table="t",`,
		`cellttl_scan_rows_seen_total{cellttl_table="t",cellttl_work="sweep",`,
		"\nprocess_start_time_seconds ",
	} {
		assert.Contains(t, metrics, want)
	}
	_, err = http.Get(base + "/healthz")
	assert.Error(t, err, "the server still answers after the command returned")
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err, "the port is still bound after the command returned")
	ln.Close()
}

// An address that cannot be bound fails before the first round, naming it.
func TestSweepMetricsAddrRefused(t *testing.T) {
	startSweep(t, seeded)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	for _, args := range [][]string{
		sweepArgs("-since", "2030-04-30T09:00:00Z", "-metrics-addr", busy.Addr().String()),
		append(append([]string{"move", "rewrite"}, on...), "-family", "sess=onesecond", "-from", "default:1h",
			"-start", "2020-01-01T00:00:00Z", "-metrics-addr", "127.0.0.1:99999"),
	} {
		stdout, stderr, code := cellttl(args...)
		assert.Equal(t, exitFailed, code, stderr)
		assert.Empty(t, stdout, "no round ran")
		assert.Regexp(t, `^cellttl (sweep|move rewrite): -metrics-addr 127\.0\.0\.1:[0-9]+: listen tcp`, stderr)
	}
}

// -log-format json turns stderr into log records, one a line; stdout keeps
// its events.
func TestSweepLogFormatJSON(t *testing.T) {
	startSweep(t, seeded)
	stdout, stderr, code := cellttl(sweepArgs("-since", "2030-04-30T09:00:00Z", "-log-format", "json")...)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, cellEvents, stdout)
	records := logRecords(t, stderr)
	// The table's families have no GC policy: a warning record each, then
	// the report's.
	require.NotEmpty(t, records)
	for len(records) > 0 && records[0]["level"] == "WARN" {
		assert.Contains(t, records[0]["msg"], "warning: table \"t\": family")
		records = records[1:]
	}
	require.NotEmpty(t, records)
	assert.Equal(t, "INFO", records[0]["level"])
	assert.Contains(t, records[0]["msg"], "expiries after 2030-04-30T09:00:00.000Z")

	// An error is a record of level ERROR naming the command.
	_, stderr, code = cellttl(with("sweep", "-family", "ses=onesecond", "-since", "2030-04-30T09:00:00Z", "-log-format", "json")...)
	assert.Equal(t, exitMismatch, code)
	records = logRecords(t, stderr)
	require.Len(t, records, 1, stderr)
	assert.Equal(t, "ERROR", records[0]["level"])
	assert.Equal(t, "sweep", records[0]["command"])
	assert.Contains(t, records[0]["msg"], `has no family "ses"`)

	_, stderr, code = cellttl(sweepArgs("-log-format", "xml")...)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `cellttl sweep: invalid value "xml" for flag -log-format: want text or json`)
}

// logRecords decodes JSON log lines.
func logRecords(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		var r map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &r), line)
		out = append(out, r)
	}
	return out
}

// With the standard OTLP environment, the command pushes its metrics on
// exit, and says so when it cannot.
func TestSweepPushesOTLP(t *testing.T) {
	startSweep(t, seeded)
	var mu sync.Mutex
	var bodies int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/metrics" {
			mu.Lock()
			bodies++
			mu.Unlock()
		}
	}))
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	_, stderr, code := cellttl(sweepArgs("-since", "2030-04-30T09:00:00Z")...)
	require.Equal(t, exitOK, code, stderr)
	mu.Lock()
	assert.Equal(t, 1, bodies, "one push, on exit")
	mu.Unlock()

	srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "100")
	_, stderr, code = cellttl(sweepArgs("-since", "2030-04-30T09:00:00Z")...)
	assert.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, "cellttl sweep: exporting the last metrics: ")

	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
	_, stderr, code = cellttl(sweepArgs("-since", "2030-04-30T09:00:00Z")...)
	assert.Equal(t, exitFailed, code)
	assert.Contains(t, stderr, `cellttl sweep: OTEL_EXPORTER_OTLP_PROTOCOL "http/json": unsupported OTLP protocol: use http/protobuf or grpc`)
}
