package sweep_test

import (
	"context"
	"sync"
	"sync/atomic"

	"cloud.google.com/go/bigtable/bttest"
	"google.golang.org/grpc"

	"github.com/cellttl/ttl/internal/emulator"
)

// startEmulator starts a bttest server for a model run, and connects
// clients to it; stop closes both, and idle waits until no call is being
// served.
//
// Its handlers tell the race detector what the network already orders:
// each message a handler sends, and its end, happen before any call that
// starts after them. bttest's ReadRows reads, unlocked, a copy of a row
// that shares the stored row's column names, which a later MutateRow
// sorts or shortens in place; the client wrote only after it read the
// row, but the detector does not see through the socket, and reports a
// race. A call that really overlaps another is still reported.
//
// A call of Once that stops (a delivery that failed or cancelled, a read
// cancelled) leaves the server's side of its reads streaming rows until
// the server notices the cancellation; the next operation's write could
// change a row such a stream is reading, bttest's race again (a run of
// TestSweepModelReplay under the detector met it, issue 26), though
// nobody reads what that stream sends. A model run waits with idle after
// each call of Once until the server has ended every call.
func startEmulator() (e *emulator.Emulator, idle, stop func(), err error) {
	var seq atomic.Int64 // each Add happens after those before it
	order := func() { seq.Add(1) }
	var mu sync.Mutex
	ended := sync.NewCond(&mu)
	serving := 0 // calls being served
	begin := func() {
		mu.Lock()
		serving++
		mu.Unlock()
	}
	end := func() {
		mu.Lock()
		serving--
		ended.Broadcast()
		mu.Unlock()
	}
	idle = func() {
		mu.Lock()
		for serving > 0 {
			ended.Wait()
		}
		mu.Unlock()
	}
	unary := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		begin()
		defer end()
		order()
		defer order()
		return handler(ctx, req)
	}
	stream := func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		begin()
		defer end()
		order()
		defer order()
		return handler(srv, orderedStream{ss, order})
	}
	srv, err := bttest.NewServer("localhost:0", grpc.ChainUnaryInterceptor(unary), grpc.ChainStreamInterceptor(stream))
	if err != nil {
		return nil, nil, nil, err
	}
	if e, err = emulator.Connect(srv.Addr); err != nil {
		srv.Close()
		return nil, nil, nil, err
	}
	return e, idle, func() { e.Close(); srv.Close() }, nil
}

// orderedStream is a server stream whose messages each happen after
// everything its handler did before sending them.
type orderedStream struct {
	grpc.ServerStream
	order func()
}

func (s orderedStream) SendMsg(m any) error {
	s.order()
	return s.ServerStream.SendMsg(m)
}
