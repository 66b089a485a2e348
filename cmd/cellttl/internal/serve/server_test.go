package serve

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestMuxRoutes(t *testing.T) {
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "m 1\n") })
	ready := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) })
	for _, tc := range []struct {
		mux    http.Handler
		method string
		path   string
		code   int
		body   string
	}{
		{Mux(metrics, ready), "GET", HealthPath, 200, "ok\n"},
		{Mux(metrics, ready), "GET", MetricsPath, 200, "m 1\n"},
		{Mux(metrics, ready), "GET", ReadyPath, 503, ""},
		{Mux(nil, ready), "GET", MetricsPath, 404, "404 page not found\n"},
		{Mux(metrics, ready), "POST", HealthPath, 405, "Method Not Allowed\n"},
		{Mux(metrics, ready), "GET", "/", 404, "404 page not found\n"},
	} {
		rec := httptest.NewRecorder()
		tc.mux.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
		if rec.Code != tc.code || rec.Body.String() != tc.body {
			t.Errorf("%s %s: got %d %q, want %d %q", tc.method, tc.path, rec.Code, rec.Body.String(), tc.code, tc.body)
		}
	}
}

// The server answers on the port it bound, and Close returns once Serve
// has (its goroutine ended), leaving the port free.
func TestServerListenAndClose(t *testing.T) {
	s, err := Listen("127.0.0.1:0", Mux(nil, http.NotFoundHandler()))
	if err != nil {
		t.Fatal(err)
	}
	addr := s.Addr().String()
	resp, err := http.Get("http://" + addr + HealthPath)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "ok\n" {
		t.Fatalf("GET %s: %d %q", HealthPath, resp.StatusCode, body)
	}
	http.DefaultClient.CloseIdleConnections()
	if err := s.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := http.Get("http://" + addr + HealthPath); err == nil {
		t.Fatal("the server still answers after Close")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the port is still bound after Close: %v", err)
	}
	ln.Close()
}

// A request in flight past Close's context is cut, and Close says why.
func TestServerCloseCutsSlowRequests(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	s, err := Listen("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		close(started)
		<-release
	}))
	if err != nil {
		t.Fatal(err)
	}
	go http.Get("http://" + s.Addr().String() + "/")
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = s.Close(ctx)
	close(release)
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("Close with a request in flight and an ended context: %v", err)
	}
}

func TestListenRefusesABadAddress(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, addr := range []string{"nonsense", busy.Addr().String(), "127.0.0.1:99999"} {
		_, err := Listen(addr, http.NotFoundHandler())
		if err == nil || !strings.HasPrefix(err.Error(), "-metrics-addr "+addr+": ") {
			t.Errorf("Listen(%q): %v, want an error naming -metrics-addr %s", addr, err, addr)
		}
	}
}
