// Package faulty runs a Bigtable emulator that fails one call of its
// choosing, for the tests of the example programs: a program must report
// every failed call, not go on to print a story that did not happen.
package faulty

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"cloud.google.com/go/bigtable/bttest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Message is the message of the error a Server fails a call with.
const Message = "faulty: this call fails on purpose"

// A Server is a bttest server that fails one call.
type Server struct {
	*bttest.Server
	fail  int64        // the call to fail, from 1; 0 for none
	calls atomic.Int64 // the calls made so far
}

// Start starts a Server on a free local port that fails its fail-th call
// (counting from 1, admin and data calls alike) with PermissionDenied,
// which the clients do not retry, and serves the others; with fail 0 it
// fails none. Close stops it.
func Start(fail int) (*Server, error) {
	s := &Server{fail: int64(fail)}
	srv, err := bttest.NewServer("localhost:0",
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
			if err := s.call(); err != nil {
				return nil, err
			}
			return handler(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
			if err := s.call(); err != nil {
				return err
			}
			return handler(srv, ss)
		}))
	if err != nil {
		return nil, err
	}
	s.Server = srv
	return s, nil
}

// call counts a call, and fails it if it is the one to fail.
func (s *Server) call() error {
	if s.calls.Add(1) == s.fail {
		return status.Error(codes.PermissionDenied, Message)
	}
	return nil
}

// Calls returns how many calls the server has had.
func (s *Server) Calls() int { return int(s.calls.Load()) }

// EveryCall checks that prog reports a failure of each call it makes. It
// runs prog on a Server that fails no call, which must succeed, to count
// its calls; then on a fresh Server per call that fails that call, where
// prog must return an error carrying Message. prog gets the address of
// the Server. With limit > 0 only the first limit calls are failed in
// turn. EveryCall returns the number of calls.
func EveryCall(t testing.TB, limit int, prog func(addr string) error) int {
	t.Helper()
	calls := 0
	for n := 0; n == 0 || n <= calls && (limit <= 0 || n <= limit); n++ {
		s, err := Start(n)
		if err != nil {
			t.Fatal(err)
		}
		err = prog(s.Addr)
		s.Close()
		switch {
		case n == 0 && err != nil:
			t.Fatalf("with no call failing: %v", err)
		case n == 0:
			calls = s.Calls()
		case err == nil:
			t.Errorf("call %d of %d failed, and the program did not report it", n, calls)
		case !strings.Contains(err.Error(), Message):
			t.Errorf("call %d of %d failed, and the program reported another error: %v", n, calls, err)
		}
	}
	return calls
}
