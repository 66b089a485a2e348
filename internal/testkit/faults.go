package testkit

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	btpb "cloud.google.com/go/bigtable/apiv2/bigtablepb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cellttl/ttl/internal/emulator"
)

// Faults in table-wide reads, for the tests of scans that stop: a
// ReadRows stream that fails part way, or hangs until its deadline, and a
// table of eight shards to read.

// StreamFaults breaks ReadRows streams: stream n (counting from 1, in the
// order the client opens them) fails with Fail[n] after passing After
// responses, or, when Hang[n], waits after them until its context ends.
// It is safe for simultaneous use.
type StreamFaults struct {
	Fail  map[int]codes.Code
	Hang  map[int]bool
	After int

	mu      sync.Mutex
	streams int
}

// Streams returns how many ReadRows streams were opened.
func (f *StreamFaults) Streams() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.streams
}

// Interceptor returns the dial option that breaks the streams, for
// emulator.StartForTest.
func (f *StreamFaults) Interceptor() grpc.DialOption {
	return grpc.WithChainStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		s, err := streamer(ctx, desc, cc, method, opts...)
		if err != nil || method != "/google.bigtable.v2.Bigtable/ReadRows" {
			return s, err
		}
		f.mu.Lock()
		f.streams++
		code, fail := f.Fail[f.streams]
		hang := f.Hang[f.streams]
		f.mu.Unlock()
		if !fail && !hang {
			return s, nil
		}
		return &brokenStream{ClientStream: s, code: code, hang: hang, left: f.After}, nil
	})
}

// brokenStream fails, or hangs, after passing left responses.
type brokenStream struct {
	grpc.ClientStream
	code codes.Code
	hang bool
	left int
}

func (s *brokenStream) RecvMsg(m any) error {
	if s.left == 0 && s.hang {
		<-s.Context().Done()
		return status.FromContextError(s.Context().Err()).Err()
	}
	if s.left == 0 {
		return status.Error(s.code, "injected: the tablet server went away")
	}
	if err := s.ClientStream.RecvMsg(m); err != nil {
		return err
	}
	if resp, ok := m.(*btpb.ReadRowsResponse); ok && len(resp.Chunks) > 0 {
		s.left--
	}
	return nil
}

// EightShards creates table "t" with one family "f" without GC on e,
// holding 400 rows r000 to r399, each with a cell stamped an hour after
// Base (column "live") and one an hour before it ("dead"), and returns
// the table as eight shards of 50 rows.
func EightShards(t *testing.T, e *emulator.Emulator) bigtable.TableAPI {
	t.Helper()
	raw := e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": nil})
	rows := make([]string, 400)
	muts := make([]*bigtable.Mutation, len(rows))
	for i := range rows {
		rows[i] = fmt.Sprintf("r%03d", i)
		muts[i] = bigtable.NewMutation()
		muts[i].Set("f", "live", MS(Base.Add(time.Hour)), []byte("v"))
		muts[i].Set("f", "dead", MS(Base.Add(-time.Hour)), []byte("v"))
	}
	errs, err := raw.ApplyBulk(context.Background(), rows, muts)
	if err == nil && errs != nil {
		err = fmt.Errorf("ApplyBulk: %v", errs)
	}
	if err != nil {
		t.Fatal(err)
	}
	return Tablets{TableAPI: raw, Keys: []string{"r050", "r100", "r150", "r200", "r250", "r300", "r350"}}
}
