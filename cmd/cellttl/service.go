package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/cellttl/ttl/cmd/cellttl/internal/serve"
	"github.com/cellttl/ttl/sweep"
	"go.opentelemetry.io/otel/metric"
)

// The long-running commands (sweep, move rewrite) as services: -metrics-addr
// serves metrics and probes (package serve) while they run, OTLP pushes
// their metrics when the standard environment asks, and -log-format json
// turns what they print to stderr into log records.

// serviceConfig is -metrics-addr and -log-format.
type serviceConfig struct {
	metricsAddr string
	logFormat   logFormatFlag
}

// logFormatFlag is -log-format: text (the zero value) or json.
type logFormatFlag string

func (f *logFormatFlag) String() string { return string(*f) }

func (f *logFormatFlag) Set(s string) error {
	if _, err := serve.NewLog(io.Discard, s); err != nil {
		return errors.New("want text or json")
	}
	*f = logFormatFlag(s)
	return nil
}

// serviceFlags defines -metrics-addr and -log-format.
func serviceFlags(fs *flag.FlagSet, c *config) {
	fs.StringVar(&c.service.metricsAddr, "metrics-addr", "", "serve /metrics (Prometheus), /healthz and /readyz at this `address`,\n"+
		"HOST:PORT, while running (port 0: any free one; default: no server)")
	fs.Var(&c.service.logFormat, "log-format", "the `format` of what is printed on stderr: text, or json, one log/slog\n"+
		"record a line (default text)")
}

// serviceLog returns where the command prints what it prints on stderr,
// with -log-format, and what to call once it has printed everything.
func serviceLog(c *config, stderr io.Writer) (io.Writer, func()) {
	w, _ := serve.NewLog(stderr, string(c.service.logFormat)) // Set refused the rest
	if l, ok := w.(*serve.LogWriter); ok {
		return l, l.Flush
	}
	return w, func() {}
}

// A service is what a long-running command serves while it runs: its
// metrics and, with -metrics-addr, the probe server. Its methods may be
// called from any goroutine.
type service struct {
	metrics *serve.Metrics
	server  *serve.Server // nil without -metrics-addr

	mu    sync.Mutex
	last  time.Time           // when the last round ended
	sweep func() sweep.Status // the sweeper's, once watched; nil before
}

// startService starts the command's metrics and binds -metrics-addr,
// before any work, so that an address that cannot be bound fails first.
// period is the command's period (0 for a command that runs once), now
// its clock. close releases what it starts.
func startService(ctx context.Context, c *config, period time.Duration, now func() time.Time) (*service, error) {
	m, err := serve.NewMetrics(ctx, c.service.metricsAddr != "", os.Getenv)
	if err != nil {
		return nil, err
	}
	s := &service{metrics: m}
	if c.service.metricsAddr != "" {
		s.server, err = serve.Listen(c.service.metricsAddr, serve.Mux(m.Handler(), serve.Ready(s.status, period, now)))
		if err != nil {
			m.Shutdown(ctx)
			return nil, err
		}
	}
	return s, nil
}

// meterProvider returns the provider the command records with: nil when
// nothing exports.
func (s *service) meterProvider() metric.MeterProvider { return s.metrics.MeterProvider() }

// roundEnded records that a round ended at t.
func (s *service) roundEnded(t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last = t
}

// watch makes the readiness the sweeper's status: whether it holds the
// lease or stands by, and when it last finished a round or a check.
func (s *service) watch(status func() sweep.Status) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep = status
}

// status is the readiness the command knows: a sweeper that holds its
// work (alone, or by the lease) is ready while its rounds end; one that
// stands by, while its checks of the lease end.
func (s *service) status() (serve.Role, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sweep == nil {
		return serve.Alone, s.last
	}
	switch st := s.sweep(); st.Role {
	case sweep.StandsBy:
		return serve.StandingBy, st.Finished
	case sweep.HoldsLease:
		return serve.Holding, s.last
	}
	return serve.Alone, s.last
}

// close stops the server and pushes the last metrics, printing on stderr
// what failed.
func (s *service) close(name string, stderr io.Writer) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if s.server != nil {
		if err := s.server.Close(ctx); err != nil {
			errorLine(stderr, fmt.Sprintf("cellttl %s: closing the metrics server: %v", name, err))
		}
	}
	if err := s.metrics.Shutdown(ctx); err != nil {
		errorLine(stderr, fmt.Sprintf("cellttl %s: exporting the last metrics: %v", name, err))
	}
}

// errorLine prints an error line on stderr: a log record of level ERROR
// with -log-format json.
func errorLine(stderr io.Writer, line string) {
	if l, ok := stderr.(interface{ Error(string) }); ok {
		l.Error(line)
		return
	}
	fmt.Fprintln(stderr, line)
}

// rounds returns round, recording when each round ends by now.
func (s *service) rounds(round func(*sweep.Report, error), now func() time.Time) func(*sweep.Report, error) {
	return func(r *sweep.Report, err error) {
		round(r, err)
		s.roundEnded(now())
	}
}

// serviceHelp is the paragraph of the long-running commands' help on
// -metrics-addr and -log-format.
const serviceHelp = `

Service. -metrics-addr HOST:PORT serves, while the command runs, /metrics
(Prometheus exposition of the instruments of docs/metrics.md, named as
cellttl_sweep_rounds_total), /healthz (200 while the process runs) and
/readyz (200 once a round has ended and while the last ended within two
-every periods, else 503 with the reason). An address that cannot be bound
fails before the first round. With OTEL_EXPORTER_OTLP_ENDPOINT or
OTEL_EXPORTER_OTLP_METRICS_ENDPOINT set, the metrics are also pushed over
OTLP (OTEL_EXPORTER_OTLP_PROTOCOL http/protobuf or grpc), and the last
ones on exit. -log-format json prints what goes to stderr (reports,
progress, errors) as JSON log records, one a line, with level, msg and
command; stdout keeps its lines.`
