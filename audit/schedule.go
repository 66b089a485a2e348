package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/text"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/schedule"
)

// A ScheduleReport counts the entries of a schedule table (package
// schedule) by the second they are due, behind or ahead of Now, in the
// buckets of a Report's histograms. It is plain data: reports of disjoint
// parts of the schedule add up with Merge.
type ScheduleReport struct {
	// Schedule and Table name the schedule table and its data table.
	Schedule string `json:"schedule"`
	Table    string `json:"table"`
	// Now is the instant that divides behind from ahead.
	Now time.Time `json:"now"`
	// Policy is the GC policy of the schedule's family, as policy.Describe
	// prints it.
	Policy string `json:"policy"`
	// Entries counts the entries; Behind those due before Now (their
	// cells have expired), Ahead the others.
	Entries int64 `json:"entries"`
	Behind  int64 `json:"behind"`
	Ahead   int64 `json:"ahead"`
	// Foreign counts the rows whose key is not an entry's.
	Foreign int64 `json:"foreign_rows"`
	// Due counts the entries by the second they are due, every bucket.
	Due []DueBucket `json:"due"`
	// Read is what the scan read; an estimate's counts are scaled.
	Read scan.Stats `json:"read"`
	// AllBuckets makes the JSON list every bucket of Due, empty ones too.
	AllBuckets bool `json:"-"`
}

// A DueBucket counts the entries due in [From, Until); a zero From or
// Until is an open end, which JSON leaves out.
type DueBucket struct {
	From    time.Time
	Until   time.Time
	Entries int64
}

// MarshalJSON encodes the bucket, an open end left out.
func (b DueBucket) MarshalJSON() ([]byte, error) {
	from, until := text.OpenEnds(b.From, b.Until)
	return json.Marshal(struct {
		From    *time.Time `json:"from,omitempty"`
		Until   *time.Time `json:"until,omitempty"`
		Entries int64      `json:"entries"`
	}{from, until, b.Entries})
}

// MarshalJSON encodes the report; Due lists its non-empty buckets only,
// unless r.AllBuckets.
func (r *ScheduleReport) MarshalJSON() ([]byte, error) {
	type plain ScheduleReport // without this method
	out := plain(*r)
	if !r.AllBuckets {
		out.Due = []DueBucket{}
		for _, b := range r.Due {
			if b.Entries != 0 {
				out.Due = append(out.Due, b)
			}
		}
	}
	return json.Marshal(out)
}

// NewScheduleReport returns an empty report of the schedule table of
// table at now, whose family has the GC policy described by gcPolicy.
func NewScheduleReport(scheduleTable, table string, now time.Time, gcPolicy string) *ScheduleReport {
	r := &ScheduleReport{Schedule: scheduleTable, Table: table, Now: now, Policy: gcPolicy}
	for _, b := range newBuckets(now) {
		r.Due = append(r.Due, DueBucket{From: b.From, Until: b.Until})
	}
	return r
}

// ScheduleFilter is the filter to read a schedule table with for AddKey:
// one cell a row of the schedule's family, its value stripped.
func ScheduleFilter() bigtable.Filter {
	return bigtable.ChainFilters(bigtable.FamilyFilter(schedule.Family), bigtable.CellsPerRowLimitFilter(1), bigtable.StripValueFilter())
}

// AddKey counts one row key of the schedule table: an entry by when it is
// due, any other key as Foreign.
func (r *ScheduleReport) AddKey(key string) {
	e, err := schedule.Parse(key)
	if err != nil {
		r.Foreign++
		return
	}
	r.Entries++
	d := e.Slot.Sub(r.Now)
	if d < 0 {
		r.Behind++
	} else {
		r.Ahead++
	}
	r.Due[bucketOf(d)].Entries++
}

// Merge adds o's counts, and what it read, to r, as Report.Merge does. It
// refuses a report of another schedule table or instant.
func (r *ScheduleReport) Merge(o *ScheduleReport) error {
	if o.Schedule != r.Schedule || !o.Now.Equal(r.Now) || len(o.Due) != len(r.Due) {
		return fmt.Errorf("audit: schedule report of %q at %s cannot merge into one of %q at %s",
			o.Schedule, text.Time(o.Now), r.Schedule, text.Time(r.Now))
	}
	for i := range r.Due {
		r.Due[i].Entries += o.Due[i].Entries
	}
	r.Entries += o.Entries
	r.Behind += o.Behind
	r.Ahead += o.Ahead
	r.Foreign += o.Foreign
	r.Read.Add(o.Read)
	r.Read.ShardsRead += o.Read.ShardsRead
	return nil
}

// String sums the report up on one line, such as
// `schedule table "s" of table "t" at 2030-04-30T09:00:00.000Z: 5 entries, 2 behind, 3 ahead`.
func (r *ScheduleReport) String() string {
	s := fmt.Sprintf("schedule table %q of table %q at %s: %s, %d behind, %d ahead",
		r.Schedule, r.Table, text.Time(r.Now), text.Plural(int(r.Entries), "entry", "entries"), r.Behind, r.Ahead)
	switch {
	case r.Read.Stopped():
		s += " (partial: the scan stopped)"
	case r.Read.Estimate():
		s += " (estimates from a sample)"
	}
	return s
}

// scale multiplies every count by f, rounded: a sample's counts as
// estimates for the table.
func (r *ScheduleReport) scale(f float64) {
	n := func(c *int64) { *c = int64(float64(*c)*f + 0.5) }
	n(&r.Entries)
	n(&r.Behind)
	n(&r.Ahead)
	n(&r.Foreign)
	for i := range r.Due {
		n(&r.Due[i].Entries)
	}
}

// CountSchedule reads the schedule table scheduleTable of table and
// counts its entries; see ScheduleReport. admin reads the GC policy of
// the schedule's family; entries is the schedule table opened with a
// data client. opts.Scan is how it reads, and its clock (nil: time.Now);
// opts.AllBuckets is copied to the report; opts.Values is ignored.
//
// It refuses a nil admin client or table (ttl.ErrNilArgument) and scan
// options that cannot work (ttl.ErrInvalidOption). A scan that stops
// early returns the report of the shards read with the error, its counts
// partial. It is safe for concurrent use when its clients are.
func CountSchedule(ctx context.Context, admin *bigtable.AdminClient, entries bigtable.TableAPI, scheduleTable, table string, opts Options) (*ScheduleReport, error) {
	if admin == nil || entries == nil || ctx == nil {
		return nil, fmt.Errorf("%w: audit.CountSchedule: nil admin client, table or context", ttl.ErrNilArgument)
	}
	if err := opts.Scan.Check(); err != nil {
		return nil, fmt.Errorf("audit.CountSchedule: %w", err)
	}
	tool, err := policy.New(admin, nil, scheduleTable, nil, policy.Options{})
	if err != nil {
		return nil, fmt.Errorf("audit.CountSchedule: %w", err)
	}
	policies, err := tool.Policies(ctx)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	now := time.Now
	if opts.Scan.Now != nil {
		now = opts.Scan.Now
	}
	r := NewScheduleReport(scheduleTable, table, now(), policy.Describe(policies[schedule.Family]))
	r.AllBuckets = opts.AllBuckets
	if opts.Scan.Table == "" {
		opts.Scan.Table = scheduleTable
	}
	if opts.Scan.Work == "" {
		opts.Scan.Work = "audit"
	}
	read, err := scan.ReadTable(ctx, entries, ScheduleFilter(), opts.Scan,
		func() *ScheduleReport { return NewScheduleReport(r.Schedule, r.Table, r.Now, r.Policy) },
		func(part *ScheduleReport, row bigtable.Row) { part.AddKey(row.Key()) },
		func(part *ScheduleReport) { _ = r.Merge(part) }) // the same table and instant: merging cannot fail
	r.scale(read.Scale())
	r.Read = read
	if err != nil {
		return r, fmt.Errorf("schedule table %q: the scan stopped after %d of %d shards: %w", scheduleTable, read.ShardsRead, read.Planned(), err)
	}
	return r, nil
}
