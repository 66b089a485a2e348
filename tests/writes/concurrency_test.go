package writes_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/testkit"
)

// One Table used by many goroutines at once; run with -race.

// TestConcurrentUse runs writers and readers on one Table at once; run it
// with -race.
func TestConcurrentUse(t *testing.T) {
	ctx := context.Background()
	clock := testkit.NewClock(testkit.Base)
	tbl, _ := testkit.NewTable(t, clock, map[string]ttl.Strategy{"f": ttl.OneSecond(), "v": ttl.SequenceNumbers(2)}, nil)
	// bttest races when a write adds a column to a row that a read is
	// streaming (it sorts the row's column names in place), so every
	// column exists before the goroutines start.
	for i := 0; i < 5; i++ {
		m := ttl.NewMutation()
		for g := 0; g < 8; g++ {
			m.Set("f", fmt.Sprint(g), []byte("x"), ttl.For(time.Hour))
		}
		m.Set("v", "c", []byte("x"), ttl.Version(0))
		require.NoError(t, tbl.Apply(ctx, fmt.Sprintf("r%d", i), m))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				row := fmt.Sprintf("r%d", i%5)
				m := ttl.NewMutation()
				m.Set("f", fmt.Sprint(g), []byte("x"), ttl.For(time.Duration(i+1)*time.Minute))
				m.Set("v", "c", []byte("x"), ttl.Version(int64(i)))
				if err := tbl.Apply(ctx, row, m); err != nil {
					errs <- err
					return
				}
				if _, err := tbl.ReadRow(ctx, row); err != nil {
					errs <- err
					return
				}
				clock.Advance(time.Millisecond)
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
	rows := 0
	require.NoError(t, tbl.ReadRows(ctx, bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		rows++
		assert.Len(t, r["v"], 2, "row %s keeps two versions", r.Key())
		assert.Len(t, r["f"], 8*4+8, "row %s has every writer's four cells and the first ones", r.Key())
		return true
	}))
	assert.Equal(t, 5, rows)
}

// TestConcurrentApplyRow runs ApplyRow and ApplyBatch on one Table from
// many goroutines at once, each writing its own values, and checks that
// every call handed over its own cells and no other call's: the states
// ApplyRow takes from its pool are never shared. Run it with -race.
func TestConcurrentApplyRow(t *testing.T) {
	ctx := context.Background()
	api := &syncCapture{}
	tbl, err := ttl.NewTable(api, map[string]ttl.Strategy{"f": ttl.OneSecond(), "v": ttl.SequenceNumbers(2)}, ttl.WithClock(testkit.NewClock(testkit.Base).Now))
	require.NoError(t, err)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				key := fmt.Sprintf("g%d-%d", g, i)
				if i%2 == 0 {
					assert.NoError(t, tbl.ApplyRow(ctx, key, func(r ttl.RowWriter) {
						r.Set("f", "c", []byte(key), ttl.For(time.Duration(g+1)*time.Minute))
						r.Set("v", "c", []byte(key), ttl.Version(int64(i)))
					}))
					continue
				}
				_, err := tbl.ApplyBatch(ctx, []string{key}, func(_ int, w ttl.RowWriter) {
					w.Set("f", "c", []byte(key), ttl.For(time.Duration(g+1)*time.Minute))
					w.Set("v", "c", []byte(key), ttl.Version(int64(i)))
				})
				assert.NoError(t, err)
			}
		}(g)
	}
	wg.Wait()
	require.Len(t, api.muts, 8*200)
	for key, m := range api.muts {
		want := bigtable.NewMutation()
		var g, i int
		_, err := fmt.Sscanf(key, "g%d-%d", &g, &i)
		require.NoError(t, err)
		want.Set("f", "c", bigtable.Time(testkit.Base.Add(time.Duration(g+1)*time.Minute)), []byte(key))
		want.Set("v", "c", bigtable.Timestamp(i*1000), []byte(key))
		assert.Equal(t, want, m, key)
	}
}

// syncCapture is a TableAPI that keeps, safely for many goroutines, the
// mutation handed over for each row.
type syncCapture struct {
	bigtable.TableAPI
	mu   sync.Mutex
	muts map[string]*bigtable.Mutation
}

func (c *syncCapture) keep(row string, m *bigtable.Mutation) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.muts == nil {
		c.muts = map[string]*bigtable.Mutation{}
	}
	c.muts[row] = m
}

func (c *syncCapture) Apply(_ context.Context, row string, m *bigtable.Mutation, _ ...bigtable.ApplyOption) error {
	c.keep(row, m)
	return nil
}

func (c *syncCapture) ApplyBulk(_ context.Context, rows []string, muts []*bigtable.Mutation, _ ...bigtable.ApplyOption) ([]error, error) {
	for i, row := range rows {
		c.keep(row, muts[i])
	}
	return nil, nil
}
