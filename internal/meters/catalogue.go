package meters

// The catalogue: every instrument the module's packages make, declared
// once, grouped by the meter that makes it. Each package takes its own
// instruments from here by name; docs/metrics.md lists the same
// instruments, and a test holds the two in step (catalogue_test.go).

// The meters, each named by its package's import path.
const (
	Core  = "github.com/cellttl/ttl"
	Scan  = "github.com/cellttl/ttl/scan"
	Move  = "github.com/cellttl/ttl/move"
	Sweep = "github.com/cellttl/ttl/sweep"
)

// The kinds of instrument, as docs/metrics.md's tables name them.
const (
	Counter   = "counter"
	Histogram = "histogram"
	Gauge     = "gauge"
)

// catalogue is every instrument declared below, in the order declared.
var catalogue []Instrument

// declare adds in to the catalogue and returns it.
func declare(in Instrument) Instrument {
	catalogue = append(catalogue, in)
	return in
}

// Catalogue returns every instrument the module makes, grouped by meter.
func Catalogue() []Instrument {
	return append([]Instrument(nil), catalogue...)
}

// The core's instruments (ttl.WithMeterProvider).
var (
	CoreRenewals     = declare(Instrument{Core, "cellttl.core.renewals", "{cell}", Counter, nil, "Cells renewed by Touch and KeepAlive: rewritten with a later expiry."})
	CoreRenewalsLost = declare(Instrument{Core, "cellttl.core.renewals.lost", "{cell}", Counter, nil, "Renewals not made because a writer changed the cell between the read and the write: the newer state stands."})
	CoreRenewalsFail = declare(Instrument{Core, "cellttl.core.renewals.failed", "{cell}", Counter, nil, "Renewals that failed with an error (ErrRenewal for KeepAlive, Touch's error)."})
	CoreConflicts    = declare(Instrument{Core, "cellttl.core.conflicts", "{write}", Counter, nil, "Conditional writes the table sent whose condition failed because the cell changed meanwhile."})
	CoreCounterReads = declare(Instrument{Core, "cellttl.core.counter.reads", "{read}", Counter, nil, "Counter reads (ReadCounter, SumCounter) sent."})
)

// The instruments of table-wide work (scan.Options.MeterProvider).
var (
	ScanRowsSeen      = declare(Instrument{Scan, "cellttl.scan.rows.seen", "{row}", Counter, nil, "Rows the server read for table-wide work."})
	ScanRowsReturned  = declare(Instrument{Scan, "cellttl.scan.rows.returned", "{row}", Counter, nil, "Rows the server's filter returned to table-wide work."})
	ScanCellsSeen     = declare(Instrument{Scan, "cellttl.scan.cells.seen", "{cell}", Counter, nil, "Cells the server read for table-wide work."})
	ScanCellsReturned = declare(Instrument{Scan, "cellttl.scan.cells.returned", "{cell}", Counter, nil, "Cells the server's filter returned to table-wide work."})
	ScanBytesReturned = declare(Instrument{Scan, "cellttl.scan.bytes.returned", "By", Counter, nil, "Bytes of the cells returned: each cell's row key, column, timestamp and value."})
	ScanRequests      = declare(Instrument{Scan, "cellttl.scan.requests", "{request}", Counter, nil, "ReadRows requests of table-wide work, retries included."})
	ScanRetries       = declare(Instrument{Scan, "cellttl.scan.retries", "{request}", Counter, nil, "ReadRows requests that resumed a stream the client retried."})
	ScanShardsDone    = declare(Instrument{Scan, "cellttl.scan.shards.done", "{shard}", Counter, nil, "Shards (or a sample's ranges) read to the end."})
)

// The instruments of a move's rewrites (move.Options.Scan.MeterProvider).
var (
	MoveRewritten = declare(Instrument{Move, "cellttl.move.cells.rewritten", "{cell}", Counter, nil, "Old cells a move rewrote in the new encoding."})
	MoveSkipped   = declare(Instrument{Move, "cellttl.move.cells.skipped", "{cell}", Counter, nil, "Old cells a move's rewrite left without trying: expired, or kept in place because their new timestamp falls on the old side."})
	MoveConflicts = declare(Instrument{Move, "cellttl.move.conflicts", "{cell}", Counter, nil, "Old cells whose conditional rewrite the server refused: changed by a writer meanwhile, or below a newer cell they would outrank."})
)

// The instruments of a sweep (sweep.Options.Scan.MeterProvider). The
// delay's buckets run from the margin's order (seconds) to a sweep a day
// behind.
var (
	SweepRounds      = declare(Instrument{Sweep, "cellttl.sweep.rounds", "{round}", Counter, nil, "Calls of Sweeper.Once, each the whole or the rest of a round, by outcome."})
	SweepEvents      = declare(Instrument{Sweep, "cellttl.sweep.events", "{event}", Counter, nil, "Events delivered: batches the Deliver function accepted."})
	SweepDelay       = declare(Instrument{Sweep, "cellttl.sweep.delivery.delay", "s", Histogram, []float64{1, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600, 24 * 3600}, "Time from each delivered event's expiry to its delivery."})
	SweepDeletes     = declare(Instrument{Sweep, "cellttl.sweep.deletes", "{row}", Counter, nil, "Rows in which a sweep that deletes (Options.Delete) deleted expired cells."})
	SweepMissed      = declare(Instrument{Sweep, "cellttl.sweep.missed", "{round}", Counter, nil, "Calls of Once whose report says GC may have deleted cells of the family that expired in the round before the sweep read them."})
	SweepUnscheduled = declare(Instrument{Sweep, "cellttl.sweep.unscheduled", "{event}", Counter, nil, "Events a reconcile sweep delivered that had no entry in the schedule: written by a writer that does not schedule."})
	SweepLeaseHeld   = declare(Instrument{Sweep, "cellttl.sweep.lease.held", "{lease}", Gauge, nil, "1 while this process holds the sweep's lease (Options.Lease), 0 while it stands by."})
	SweepLeaseTaken  = declare(Instrument{Sweep, "cellttl.sweep.lease.acquired", "{lease}", Counter, nil, "Times this process took the sweep's lease."})
	SweepLeaseLost   = declare(Instrument{Sweep, "cellttl.sweep.lease.lost", "{lease}", Counter, nil, "Times this process stopped holding the sweep's lease without releasing it: expired, or a renewal or save refused."})
)
