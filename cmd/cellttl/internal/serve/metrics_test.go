package serve

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// noEnv is an environment without OTEL_* variables.
func noEnv(string) string { return "" }

// The exposition names instruments as docs/metrics.md says alert rules
// see them: dots become underscores, the unit and _total are suffixed.
func TestPrometheusNames(t *testing.T) {
	ctx := context.Background()
	m, err := NewMetrics(ctx, true, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Shutdown(ctx)
	meter := m.MeterProvider().Meter("github.com/cellttl/ttl/sweep")
	rounds, _ := meter.Int64Counter("cellttl.sweep.rounds", metric.WithUnit("{round}"))
	delay, _ := meter.Float64Histogram("cellttl.sweep.delivery.delay", metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(1, 5))
	rounds.Add(ctx, 2, metric.WithAttributes(attribute.String("cellttl.outcome", "complete")))
	delay.Record(ctx, 3, metric.WithAttributes(attribute.String("cellttl.family", "sess")))

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, MetricsPath, nil))
	body := rec.Body.String()
	for _, want := range []string{
		`cellttl_sweep_rounds_total{cellttl_outcome="complete",otel_scope_name="github.com/cellttl/ttl/sweep"`,
		`cellttl_sweep_delivery_delay_seconds_bucket{cellttl_family="sess",otel_scope_name="github.com/cellttl/ttl/sweep",otel_scope_schema_url="",otel_scope_version="",le="5"} 1`,
		"go_goroutines ",
		"target_info{",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if t.Failed() {
		t.Log(body)
	}
}

func TestNoExporter(t *testing.T) {
	m, err := NewMetrics(context.Background(), false, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if m.MeterProvider() != nil || m.Handler() != nil {
		t.Errorf("without an exporter: provider %v, handler %v; want none", m.MeterProvider(), m.Handler())
	}
	if err := m.Shutdown(context.Background()); err != nil {
		t.Error(err)
	}
}

// With the standard environment set, Shutdown pushes what was recorded to
// the OTLP endpoint.
func TestOTLPPush(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
	}))
	defer srv.Close()
	for _, env := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"} {
		t.Run(env, func(t *testing.T) {
			paths = nil
			url := srv.URL
			if env == "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT" {
				url += "/custom/metrics"
			}
			t.Setenv(env, url)
			ctx := context.Background()
			m, err := NewMetrics(ctx, false, func(k string) string { return map[string]string{env: url}[k] })
			if err != nil {
				t.Fatal(err)
			}
			if m.Handler() != nil {
				t.Error("OTLP alone serves no exposition")
			}
			c, _ := m.MeterProvider().Meter("test").Int64Counter("cellttl.sweep.rounds")
			c.Add(ctx, 1)
			if err := m.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			want := "/v1/metrics"
			if env == "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT" {
				want = "/custom/metrics"
			}
			mu.Lock()
			defer mu.Unlock()
			if len(paths) == 0 || paths[0] != want {
				t.Errorf("pushed to %v, want %s", paths, want)
			}
		})
	}
}

func TestOTLPProtocols(t *testing.T) {
	for _, tc := range []struct {
		proto, metricsProto string
		err                 error
	}{
		{"grpc", "", nil},
		{"http/json", "grpc", nil},
		{"", "http/protobuf", nil},
		{"http/json", "", ErrOTLPProtocol},
		{"", "thrift", ErrOTLPProtocol},
	} {
		env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1",
			"OTEL_EXPORTER_OTLP_PROTOCOL": tc.proto, "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": tc.metricsProto}
		m, err := NewMetrics(context.Background(), false, func(k string) string { return env[k] })
		if !errors.Is(err, tc.err) {
			t.Errorf("%+v: %v, want %v", tc, err, tc.err)
		}
		if err != nil {
			if !strings.Contains(err.Error(), "use http/protobuf or grpc") {
				t.Errorf("%+v: %v does not say what to use", tc, err)
			}
			continue
		}
		if m.MeterProvider() == nil {
			t.Errorf("%+v: no provider", tc)
		}
		// Nothing recorded and nobody listening: shut down without waiting.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		m.Shutdown(ctx)
	}
}

func TestBadResourceEnvironment(t *testing.T) {
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "no-equals-sign")
	if _, err := NewMetrics(context.Background(), true, noEnv); err == nil {
		t.Error("a malformed OTEL_RESOURCE_ATTRIBUTES was accepted")
	}
}
