package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/otlptranslator"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
)

// ErrOTLPProtocol reports an OTEL_EXPORTER_OTLP_PROTOCOL this command
// cannot export with.
var ErrOTLPProtocol = errors.New("unsupported OTLP protocol")

// Metrics is the command's meter provider and what it exports to: a
// Prometheus registry served by Handler, an OTLP endpoint, both or none.
type Metrics struct {
	provider *sdkmetric.MeterProvider // nil: nothing exports
	handler  http.Handler             // nil: no Prometheus exposition
}

// NewMetrics returns the command's metrics: Prometheus exposition when
// prometheus is set, OTLP push (a periodic reader) when getenv gives
// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_METRICS_ENDPOINT, over
// the protocol OTEL_EXPORTER_OTLP_[METRICS_]PROTOCOL names (http/protobuf,
// the default, or grpc; ErrOTLPProtocol otherwise). The exporters read the
// rest of the standard OTEL_* environment. Names are translated to
// Prometheus's with underscores and unit and _total suffixes. Shutdown
// releases what it starts.
func NewMetrics(ctx context.Context, prom bool, getenv func(string) string) (*Metrics, error) {
	m := &Metrics{}
	var opts []sdkmetric.Option
	if prom {
		reg := prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		exp, err := otelprom.New(otelprom.WithRegisterer(reg),
			otelprom.WithTranslationStrategy(otlptranslator.UnderscoreEscapingWithSuffixes))
		if err != nil {
			return nil, err
		}
		opts = append(opts, sdkmetric.WithReader(exp))
		m.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	}
	if getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") != "" {
		exp, err := otlpExporter(ctx, getenv)
		if err != nil {
			return nil, err
		}
		opts = append(opts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)))
	}
	if len(opts) == 0 {
		return m, nil
	}
	res, err := resource.New(ctx, resource.WithAttributes(attribute.String("service.name", "cellttl")),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		return nil, err
	}
	m.provider = sdkmetric.NewMeterProvider(append(opts, sdkmetric.WithResource(res))...)
	return m, nil
}

// otlpExporter returns the OTLP metric exporter of the protocol the
// environment names.
func otlpExporter(ctx context.Context, getenv func(string) string) (sdkmetric.Exporter, error) {
	proto := getenv("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL")
	if proto == "" {
		proto = getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch strings.TrimSpace(proto) {
	case "", "http/protobuf":
		return otlpmetrichttp.New(ctx)
	case "grpc":
		return otlpmetricgrpc.New(ctx)
	}
	return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL %q: %w: use http/protobuf or grpc", proto, ErrOTLPProtocol)
}

// MeterProvider returns the provider to record with, or nil when nothing
// exports (the library then records nothing).
func (m *Metrics) MeterProvider() metric.MeterProvider {
	if m.provider == nil {
		return nil
	}
	return m.provider
}

// Handler returns the Prometheus exposition handler, or nil without one.
func (m *Metrics) Handler() http.Handler { return m.handler }

// Shutdown exports what the OTLP reader has not pushed yet and stops the
// readers, waiting until ctx ends at most.
func (m *Metrics) Shutdown(ctx context.Context) error {
	if m.provider == nil {
		return nil
	}
	return m.provider.Shutdown(ctx)
}
