package pubsubsink_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"cloud.google.com/go/bigtable/bttest"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/pubsubsink"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/schedule"
	"github.com/cellttl/ttl/sweep"
)

// A clock is a fake clock, safe for simultaneous use.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time    { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Set(now time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.now = now }

// newBigtable starts an in-process Bigtable emulator (bttest) for the
// test, creates table with families, their GC policies set by
// policy.Ensure, and returns its admin client and the table.
func newBigtable(t *testing.T, table string, families map[string]ttl.Strategy) (*bigtable.AdminClient, *bigtable.Table) {
	t.Helper()
	srv, err := bttest.NewServer("localhost:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	t.Setenv("BIGTABLE_EMULATOR_HOST", srv.Addr)
	admin, err := bigtable.NewAdminClient(ctx, "proj", "inst")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	client, err := bigtable.NewClient(ctx, "proj", "inst")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	if err := admin.CreateTable(ctx, table); err != nil {
		t.Fatal(err)
	}
	data := client.Open(table)
	tool, err := policy.New(admin, data, table, families, policy.Options{Scan: scan.Options{Now: func() time.Time { return base }}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tool.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	return admin, data
}

// TestSweepToPubSub runs a real sweep on the Bigtable emulator into
// Pub/Sub: the topic disappears in the middle of the round, which stops
// with ErrNoTopic; the next call, once the topic is back, resumes the
// round. Every expired cell is published exactly once (the failed batch
// published nothing), each row's in the order the sweep delivered them,
// and decodes back to its event.
func TestSweepToPubSub(t *testing.T) {
	fams := map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), time.Hour)}
	admin, data := newBigtable(t, "sessions", fams)
	c := &clock{now: base}
	tbl, err := ttl.NewTable(data, fams, ttl.WithClock(c.Now))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := range 12 {
		row := fmt.Sprintf("user#%02d", i)
		m := ttl.NewMutation()
		for j, col := range []string{"token", "name"} {
			life := time.Duration(2*i+j+1) * time.Second
			m.Set("sess", col, []byte("v"), ttl.For(life))
			want = append(want, fmt.Sprintf(`cell expired %s: table "sessions" row %q sess:%q`,
				base.Add(life).Format(time.RFC3339Nano), row, col))
		}
		m.Set("sess", "keep", []byte("v"), ttl.For(time.Hour)) // not expired
		if err := tbl.Apply(ctx, row, m); err != nil {
			t.Fatal(err)
		}
	}
	sort.Strings(want)

	// One shard at a time, so that the failed delivery is the round's
	// only error, which Once returns.
	s, err := sweep.New(admin, data, "sessions", fams, sweep.Options{Now: c.Now, Since: base, Batch: 5, Scan: scan.Options{Workers: 1}})
	if err != nil {
		t.Fatal(err)
	}
	srv, client := newFake(t)
	publisher := createTopic(t, client, "expired", true)
	toPubSub, err := pubsubsink.New(publisher, pubsubsink.Options{OrderingKey: pubsubsink.ByRow})
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	given := map[string][]string{} // the IDs of each row's events delivered, in order
	deliver := func(ctx context.Context, events []sweep.Event) error {
		if calls++; calls == 3 {
			if err := client.TopicAdminClient.DeleteTopic(ctx, &pubsubpb.DeleteTopicRequest{Topic: topicName("expired")}); err != nil {
				t.Fatal(err)
			}
		}
		err := toPubSub(ctx, events)
		for _, e := range events {
			if err == nil {
				given[e.Row] = append(given[e.Row], e.ID())
			}
		}
		return err
	}

	c.Set(base.Add(time.Minute))
	r, err := s.Once(ctx, deliver)
	if !errors.Is(err, pubsubsink.ErrNoTopic) {
		t.Fatalf("Once with the topic deleted: %v, want ErrNoTopic", err)
	}
	if r == nil || r.Complete() {
		t.Fatalf("Once with the topic deleted: report %v, want one not complete", r)
	}
	if _, err := client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: topicName("expired")}); err != nil {
		t.Fatal(err)
	}
	r, err = s.Once(ctx, deliver)
	if err != nil {
		t.Fatalf("Once after the topic is back: %v", err)
	}
	if !r.Complete() || !r.Resumed || r.Events != int64(len(want)) {
		t.Errorf("report: complete %v, resumed %v, %d events; want complete, resumed, %d events:\n%v",
			r.Complete(), r.Resumed, r.Events, len(want), r)
	}

	var got []string
	ids := map[string]bool{}
	published := map[string][]string{} // the IDs of each row's messages, in order
	for _, m := range srv.Messages() {
		e := decode(t, m.Data)
		checkMessage(t, m.Data, m.Attributes, e)
		got = append(got, e.String())
		if ids[e.ID()] {
			t.Errorf("%v: published twice", e)
		}
		ids[e.ID()] = true
		if m.OrderingKey != e.Row {
			t.Errorf("%v: ordering key %q, want its row", e, m.OrderingKey)
		}
		published[e.Row] = append(published[e.Row], e.ID())
	}
	if fmt.Sprint(published) != fmt.Sprint(given) {
		t.Errorf("each row's messages in order %v, want the order delivered %v", published, given)
	}
	sort.Strings(got)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("published:\n%s\nwant:\n%s", lines(got), lines(want))
	}
}

func lines(l []string) string {
	out := ""
	for _, s := range l {
		out += "  " + s + "\n"
	}
	return out
}

// TestScheduledSweepToPubSub runs a scheduled sweep (writers given
// ttl.WithSchedule, sweep.Options.Schedule) into Pub/Sub: the topic
// disappears in the middle of the round, which stops with ErrNoTopic and
// resumes once it is back. Every expired cell is published exactly once,
// and the round, which deletes, leaves in the schedule only the entries
// of the cells still live.
func TestScheduledSweepToPubSub(t *testing.T) {
	fams := map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), time.Hour)}
	admin, data := newBigtable(t, "sessions", fams)
	if err := admin.CreateTableFromConf(ctx, &bigtable.TableConf{TableID: "sessions_sched",
		ColumnFamilies: map[string]bigtable.Family{schedule.Family: {GCPolicy: schedule.Policy(time.Hour)}}}); err != nil {
		t.Fatal(err)
	}
	bt, err := bigtable.NewClient(ctx, "proj", "inst")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bt.Close() })
	sched := bt.Open("sessions_sched")
	c := &clock{now: base}
	tbl, err := ttl.NewTable(data, fams, ttl.WithClock(c.Now), ttl.WithSchedule(sched))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := range 40 {
		row := fmt.Sprintf("user#%02d", i)
		m := ttl.NewMutation()
		for j, col := range []string{"token", "name"} {
			life := time.Duration(2*i+j+1) * time.Second
			m.Set("sess", col, []byte("v"), ttl.For(life))
			want = append(want, fmt.Sprintf(`cell expired %s: table "sessions" row %q sess:%q`,
				base.Add(life).Format(time.RFC3339Nano), row, col))
		}
		m.Set("sess", "keep", []byte("v"), ttl.For(time.Hour)) // not expired
		if err := tbl.Apply(ctx, row, m); err != nil {
			t.Fatal(err)
		}
	}
	sort.Strings(want)

	s, err := sweep.New(admin, data, "sessions", fams, sweep.Options{Now: c.Now, Since: base, Batch: 5, Delete: true,
		Schedule: sched, ScheduleTable: "sessions_sched", Scan: scan.Options{Workers: 1}})
	if err != nil {
		t.Fatal(err)
	}
	srv, client := newFake(t)
	toPubSub, err := pubsubsink.New(createTopic(t, client, "expired", true), pubsubsink.Options{OrderingKey: pubsubsink.ByRow})
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	deliver := func(ctx context.Context, events []sweep.Event) error {
		if calls++; calls == 3 {
			if err := client.TopicAdminClient.DeleteTopic(ctx, &pubsubpb.DeleteTopicRequest{Topic: topicName("expired")}); err != nil {
				t.Fatal(err)
			}
		}
		return toPubSub(ctx, events)
	}

	c.Set(base.Add(2 * time.Minute))
	r, err := s.Once(ctx, deliver)
	if !errors.Is(err, pubsubsink.ErrNoTopic) || r == nil || r.Complete() {
		t.Fatalf("Once with the topic deleted: %v, report %v; want ErrNoTopic, not complete", err, r)
	}
	if _, err := client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: topicName("expired")}); err != nil {
		t.Fatal(err)
	}
	r, err = s.Once(ctx, deliver)
	if err != nil {
		t.Fatalf("Once after the topic is back: %v", err)
	}
	if !r.Complete() || !r.Resumed || r.Events != int64(len(want)) || r.Read.Shards != schedule.Salts {
		t.Errorf("report: complete %v, resumed %v, %d events, %d shards; want complete, resumed, %d events, the %d salts:\n%v",
			r.Complete(), r.Resumed, r.Events, r.Read.Shards, len(want), schedule.Salts, r)
	}

	var got []string
	ids := map[string]bool{}
	for _, m := range srv.Messages() {
		e := decode(t, m.Data)
		checkMessage(t, m.Data, m.Attributes, e)
		got = append(got, e.String())
		if ids[e.ID()] {
			t.Errorf("%v: published twice", e)
		}
		ids[e.ID()] = true
	}
	sort.Strings(got)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("published:\n%s\nwant:\n%s", lines(got), lines(want))
	}

	// The entries served are deleted; those of the live cells are left.
	left := 0
	err = sched.ReadRows(ctx, bigtable.InfiniteRange(""), func(row bigtable.Row) bool {
		left++
		if e, err := schedule.Parse(row.Key()); err != nil || !e.Slot.Equal(base.Add(time.Hour)) {
			t.Errorf("entry %q left (%v); want only those of the cells live an hour", row.Key(), err)
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if left != 40 {
		t.Errorf("%d entries left; want the 40 of the live cells", left)
	}
}
