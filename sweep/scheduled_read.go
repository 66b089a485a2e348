package sweep

import (
	"context"
	"sync"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/scan"
)

// readAhead is how many requests of rowsPerRead rows one salt of a
// scheduled round keeps in flight by default: while the rows of one
// request are judged and delivered, the next ones are being read. A round
// has at most readAhead × Options.Scan.Workers requests in flight.
const readAhead = 4

// rowReads says how a scheduled round reads the rows a salt names: ahead
// requests in flight at once, of perRead rows each; zero means readAhead
// and rowsPerRead.
type rowReads struct{ ahead, perRead int }

// A rowRead is one request of a salt's rows: the keys asked for, and once
// done is closed, the rows read of them (in key order), what was read and
// the request's error.
type rowRead struct {
	keys []string
	rows []bigtable.Row
	read scan.Stats
	err  error
	done chan struct{}
}

// readRows reads the rows named by keys (sorted, each once) through the
// round's filter, in requests of rowsPerRead keys, up to the sweep's read
// ahead at once, and calls each, in the calling goroutine, with the keys
// of every request and the rows read of them, request after request in
// key order: what a salt judges, it judges in the order a single stream
// would have read it. It stops at the first error of a request or of
// each, and returns it once every request it started has ended; it counts
// what every request read, finished or not.
func (r *run) readRows(ctx context.Context, keys []string, c *scan.ShardProgress, each func(keys []string, rows []bigtable.Row) error) error {
	ahead, perRead := r.s.reads.ahead, r.s.reads.perRead
	if ahead <= 0 {
		ahead = readAhead
	}
	if perRead <= 0 {
		perRead = rowsPerRead
	}
	readCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var reads []*rowRead // started; those before next are consumed
	next := 0
	defer func() {
		cancel()
		wg.Wait()
		for _, rd := range reads[next:] {
			r.addRead(rd.read)
		}
	}()
	start := func() {
		rd := &rowRead{keys: keys[:min(perRead, len(keys))], done: make(chan struct{})}
		keys = keys[len(rd.keys):]
		reads = append(reads, rd)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(rd.done)
			rd.read, rd.err = scan.ReadSet(readCtx, r.s.data, bigtable.RowList(rd.keys), r.filter, c, func(row bigtable.Row) error {
				rd.rows = append(rd.rows, row)
				return nil
			})
		}()
	}
	for {
		for len(keys) > 0 && len(reads)-next < ahead {
			start()
		}
		if next == len(reads) {
			return nil
		}
		rd := reads[next]
		<-rd.done
		next++
		r.addRead(rd.read)
		if rd.err != nil {
			return rd.err
		}
		if err := each(rd.keys, rd.rows); err != nil {
			return err
		}
		reads[next-1] = nil // its rows are judged: let them go
	}
}
