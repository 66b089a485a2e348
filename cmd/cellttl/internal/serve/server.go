package serve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Paths the server answers.
const (
	MetricsPath = "/metrics" // Prometheus exposition
	HealthPath  = "/healthz" // liveness: 200 while the process runs
	ReadyPath   = "/readyz"  // readiness: see Ready
)

// Mux returns the server's routes: metrics at MetricsPath (none when
// metrics is nil), liveness at HealthPath and ready at ReadyPath.
func Mux(metrics, ready http.Handler) *http.ServeMux {
	mux := http.NewServeMux()
	if metrics != nil {
		mux.Handle("GET "+MetricsPath, metrics)
	}
	mux.HandleFunc("GET "+HealthPath, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.Handle("GET "+ReadyPath, ready)
	return mux
}

// A Server serves a handler on an address until closed. Its methods may
// be called from any goroutine.
type Server struct {
	srv  *http.Server
	addr net.Addr
	done chan error
}

// Listen binds addr (HOST:PORT; port 0 picks a free one) and serves h on it
// in a goroutine that Close ends. It fails, naming the address, when addr
// cannot be bound: before the caller starts its work.
func Listen(addr string, h http.Handler) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("-metrics-addr %s: %w", addr, err)
	}
	s := &Server{
		srv:  &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second},
		addr: ln.Addr(),
		done: make(chan error, 1),
	}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// Addr returns the address the server listens on.
func (s *Server) Addr() net.Addr { return s.addr }

// Close stops the server: it stops listening, waits for the requests in
// flight until ctx ends, then closes their connections, and returns once
// the serving goroutine has ended. It returns the error that ended
// serving, if any other than the close itself.
func (s *Server) Close(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if err != nil {
		err = errors.Join(err, s.srv.Close())
	}
	if serr := <-s.done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}
