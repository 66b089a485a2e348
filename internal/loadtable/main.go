// Command loadtable fills a table of the emulator named by
// BIGTABLE_EMULATOR_HOST for the scale measurements of scripts/scale-emulator.sh:
// rows of cells with real timestamps spread over the last days, a third of
// them older than a day, in family f, values of -value bytes.
//
//	go run ./internal/loadtable -table t -rows 200000 -cells 5
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"time"

	"cloud.google.com/go/bigtable"
)

func main() {
	project := flag.String("project", "p", "project")
	instance := flag.String("instance", "i", "instance")
	table := flag.String("table", "t", "table, created with family f if missing")
	rows := flag.Int("rows", 200_000, "rows to write")
	cells := flag.Int("cells", 5, "cells a row")
	value := flag.Int("value", 100, "bytes a value")
	flag.Parse()
	if err := load(*project, *instance, *table, *rows, *cells, *value); err != nil {
		fmt.Fprintln(os.Stderr, "loadtable:", err)
		os.Exit(1)
	}
}

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
	tbl := client.Open(table)
	value := make([]byte, size)
	now := time.Now()
	const batch = 2000
	work := make(chan int)
	errs := make(chan error, 4)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for first := range work {
				n := min(batch, rows-first)
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
