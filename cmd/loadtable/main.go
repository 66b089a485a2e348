// Command loadtable fills a table of the emulator named by
// BIGTABLE_EMULATOR_HOST for the scale measurements of scripts/scale-emulator.sh:
// rows of cells with real timestamps spread over the last three days (a
// third of them less than a day old), in family f, values of -value bytes.
//
//	go run ./cmd/loadtable -table t -rows 200000 -cells 5
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"cloud.google.com/go/bigtable"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

// run runs the command with args, printing its errors to stderr, and
// returns its exit status: 2 for bad flags, as the flag package exits.
func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("loadtable", flag.ContinueOnError)
	fs.SetOutput(stderr)
	project := fs.String("project", "p", "project")
	instance := fs.String("instance", "i", "instance")
	table := fs.String("table", "t", "table, created with family f if missing")
	rows := fs.Int("rows", 200_000, "rows to write")
	cells := fs.Int("cells", 5, "cells a row")
	value := fs.Int("value", 100, "bytes a value")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if err := load(*project, *instance, *table, *rows, *cells, *value); err != nil {
		fmt.Fprintln(stderr, "loadtable:", err)
		return 1
	}
	return 0
}

// load creates the table with family f if it is missing, and fills it.
func load(project, instance, table string, rows, cells, size int) error {
	ctx := context.Background()
	admin, err := bigtable.NewAdminClient(ctx, project, instance)
	if err != nil {
		return err
	}
	defer admin.Close()
	if _, err := admin.TableInfo(ctx, table); err != nil {
		if err := admin.CreateTable(ctx, table); err != nil {
			return err
		}
		if err := admin.CreateColumnFamily(ctx, table, "f"); err != nil {
			return err
		}
	}
	client, err := bigtable.NewClientWithConfig(ctx, project, instance, bigtable.ClientConfig{MetricsProvider: bigtable.NoopMetricsProvider{}})
	if err != nil {
		return err
	}
	defer client.Close()
	return fill(ctx, client.Open(table), time.Now(), rows, cells, make([]byte, size))
}

// batch is how many rows one ApplyBulk call writes.
const batch = 2000

// fill writes rows rows of cells cells each, in batches by 4 workers, and
// returns the first error.
func fill(ctx context.Context, tbl bigtable.TableAPI, now time.Time, rows, cells int, value []byte) error {
	work := make(chan int)
	errs := make(chan error, 4)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for first := range work {
				keys, muts := mutations(first, min(batch, rows-first), cells, now, value)
				if es, err := tbl.ApplyBulk(ctx, keys, muts); err != nil || es != nil {
					errs <- fmt.Errorf("rows %d..: %v %v", first, err, es)
					return
				}
			}
		}()
	}
	for first := 0; first < rows; first += batch {
		select {
		case work <- first:
		case err := <-errs:
			close(work)
			wg.Wait()
			return err
		}
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
	}
	return nil
}

// mutations returns the keys and mutations of n rows from row first: row
// r's cell c is column c<c>, (r*cells+c) % 72 hours older than now.
func mutations(first, n, cells int, now time.Time, value []byte) ([]string, []*bigtable.Mutation) {
	keys := make([]string, n)
	muts := make([]*bigtable.Mutation, n)
	for i := range keys {
		r := first + i
		keys[i] = fmt.Sprintf("row%09d", r)
		muts[i] = bigtable.NewMutation()
		for c := 0; c < cells; c++ {
			age := time.Duration((r*cells+c)%72) * time.Hour
			muts[i].Set("f", fmt.Sprint("c", c), bigtable.Time(now.Add(-age)), value)
		}
	}
	return keys, muts
}
