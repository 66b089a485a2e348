package sweep

import (
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/scan"
)

// DefaultMargin is the margin a sweep keeps behind now when
// Options.Margin is zero.
const DefaultMargin = 10 * time.Second

// DefaultBatch is the most events a sweep delivers at once when
// Options.Batch is zero.
const DefaultBatch = 1000

// Options configures a sweep. The zero value reports each expired cell,
// from the time of the first round on, keeps DefaultMargin behind now,
// keeps its watermark in memory, and deletes nothing.
type Options struct {
	// Scan is how the tool reads the table, and its clock and meters:
	// workers and progress; Scan.Now, the clock (nil means time.Now);
	// Scan.MeterProvider, if not nil, records the sweep's rounds, the
	// events delivered and their delay after expiry, the rows deleted in
	// and the spans missed (docs/metrics.md) beside the scans' own
	// metrics, with the table and the work "sweep" unless Scan.Table and
	// Scan.Work say otherwise. A sample is refused: a sweep reports every
	// expiry.
	Scan scan.Options

	// Granularity is what each event reports: each Cell (the default),
	// a Column or a Row once nothing in it is live.
	Granularity Granularity

	// Margin is how far behind now a round ends: a cell whose expiry is
	// within Margin of now waits for the next round. A write lands after
	// its timestamp was chosen, and a sweep cannot see a cell it read
	// before; a cell whose expiry is already behind the watermark when it
	// lands is never reported. Margin must cover the longest write and
	// the skew between the writers' clocks and the sweep's. Zero means
	// DefaultMargin; negative is invalid.
	Margin time.Duration

	// Since is where the first round starts when the checkpoint holds no
	// watermark: the sweep reports what expired after Since. The zero
	// value starts at the first round's end: it reports only what expires
	// from then on. Since must not be after now.
	Since time.Time

	// Values makes events carry the expired cells' values (not a row
	// event's), which the server then transfers.
	Values bool

	// Delete makes the sweep delete, after delivering each batch, the
	// expired cells of the columns in which it found cells expired, so
	// that readers that do not use this module stop seeing them. It
	// deletes only cells expired at the round's end (behind the margin),
	// by ranges of timestamps no live cell occupies.
	Delete bool

	// WriteTimes says the table records write times (ttl.RecordWriteTime):
	// the write-time companions are neither reported nor read, and are
	// deleted with their cells.
	WriteTimes bool

	// Checkpoint keeps the watermark and the progress of each round, so
	// that a sweep run again resumes where the last one stopped and
	// reports nothing twice. nil keeps them in memory, for the life of the
	// Sweeper. A checkpoint is for one sweep: of one table, families and
	// granularity; another sweep's is refused with ttl.ErrInvalidOption.
	Checkpoint scan.Checkpoint

	// Lease, when positive, makes the processes given the same
	// checkpoint the replicas of one sweep: the checkpoint must keep a
	// lease (a LeaseCheckpoint, such as package lease's), of this
	// duration. One replica at a time holds it and delivers; the others
	// stand by (Once returns ErrStandby, Every tries again every period)
	// and one takes over within Lease plus a period once the holder
	// stops renewing. A holder renews it every third of Lease, between
	// batches and while Every waits, checks it before each batch and each
	// save, and stops, delivering nothing more and saving nothing, past
	// two thirds of Lease from its last renewal. See docs/sweeps.md.
	// Zero runs alone; negative is invalid.
	Lease time.Duration

	// Batch is the most events delivered at once; zero means
	// DefaultBatch. A sweep that stops while delivering delivers that
	// batch again when run again.
	Batch int

	// Schedule, when not nil, is the data table's schedule (package
	// schedule), which writers given ttl.WithSchedule fill beside the
	// data, opened with a data client; ScheduleTable is its name. Each
	// round then reads the entries of the seconds it covers and only the
	// rows they name, instead of the whole table, and judges each row as
	// a scanning round does: it reports what a scanning round reports of
	// those rows, and a stale entry nothing. A cell written without an
	// entry (by cbt, another language, an import) is not reported: run a
	// Reconcile sweep beside it. With Delete and an admin client, a round
	// of a sweep given every family of the table that may hold cells with
	// entries (GC collects it by age, or not at all, as in a ttl.Move)
	// also deletes the entries it served of the seconds the sweep has
	// served whole since the first round its checkpoint recorded: the
	// second a round's end splits goes in the next round (an entry names
	// a row, not a family, and a sweep further behind may need an entry
	// of a second begun before that first round); other entries go by
	// the schedule's GC. With an admin client, a round refuses a
	// schedule table without family schedule.Family, or whose GC keeps
	// entries shorter than the families keep expired cells
	// (schedule.Policy).
	Schedule      bigtable.TableAPI
	ScheduleTable string

	// Reconcile, with Schedule, makes each round a scanning round that
	// delivers only the events the schedule holds no entry for: an event
	// is scheduled when the schedule holds the entry of its cell (for a
	// column or row event, of the cell that expired last), which a
	// scheduled sweep then reports. It counts them in Report.Unscheduled.
	// With Delete it deletes the expired cells only of the rows none of
	// whose expired cells has an entry, which a scheduled sweep has yet
	// to read. Run it at a long period (a day) within the families'
	// grace, with a checkpoint of its own.
	Reconcile bool

	// RoundTimeout, when positive, bounds each round: a round that has
	// not finished within it fails with an error wrapping ErrRoundTimeout
	// and context.DeadlineExceeded, keeping what it delivered,
	// and the next round (Every's) resumes it. Zero means no bound: a
	// round that cannot reach Bigtable waits on the client's retries, and
	// finishes once Bigtable answers, saying nothing meanwhile.
	// Negative is invalid.
	RoundTimeout time.Duration
}
