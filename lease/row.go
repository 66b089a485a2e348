package lease

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/routing"
	"github.com/cellttl/ttl/scan"
)

// row is the checkpoint's row as read.
type row struct {
	gen    string
	lease  leaseState
	record []byte // nil when none, or not read
}

// read reads the row; withRecord reads the record too.
func (c *Checkpoint) read(ctx context.Context, withRecord bool) (row, error) {
	f := bigtable.ChainFilters(bigtable.FamilyFilter(Family), bigtable.LatestNFilter(1))
	if !withRecord {
		f = bigtable.ChainFilters(bigtable.FamilyFilter(Family),
			bigtable.ColumnFilter(colGen+"|"+colHolder+"|"+colToken+"|"+colExpiry), bigtable.LatestNFilter(1))
	}
	r, err := c.data.ReadRow(ctx, c.key, bigtable.RowFilter(f))
	if err != nil {
		return row{}, fmt.Errorf("lease: reading the checkpoint %s: %w", c, err)
	}
	var out row
	for _, it := range r[Family] {
		v := string(it.Value)
		switch it.Column[len(Family)+1:] {
		case colGen:
			out.gen = v
		case colHolder:
			out.lease.holder = v
		case colToken:
			out.lease.token = v
		case colExpiry:
			if out.lease.expiry, err = time.Parse(time.RFC3339Nano, v); err != nil {
				return row{}, fmt.Errorf("lease: the checkpoint %s: expiry %q is not a time: %w", c, v, err)
			}
		case colRecord:
			out.record = it.Value
		}
	}
	return out, nil
}

// write applies m, with the generation advanced, if the row's generation
// is still gen ("" for a row without one), and reports whether it did.
// The caller holds c.op.
func (c *Checkpoint) write(ctx context.Context, gen string, m *bigtable.Mutation, op string) (string, bool, error) {
	next := "1"
	if gen != "" {
		n, err := strconv.ParseUint(gen, 10, 64)
		if err != nil {
			return "", false, fmt.Errorf("lease: the checkpoint %s: generation %q is not a number", c, gen)
		}
		next = strconv.FormatUint(n+1, 10)
	}
	c.set(m, colGen, next)
	isGen := bigtable.ChainFilters(bigtable.FamilyFilter(Family), bigtable.ColumnFilter(colGen), bigtable.LatestNFilter(1))
	var cond *bigtable.Mutation
	if gen == "" {
		cond = bigtable.NewCondMutation(isGen, nil, m)
	} else {
		cond = bigtable.NewCondMutation(bigtable.ChainFilters(isGen, bigtable.ValueFilter(regexp.QuoteMeta(gen))), m, nil)
	}
	var matched bool
	if err := c.data.Apply(ctx, c.key, cond, bigtable.GetCondMutationResult(&matched)); err != nil {
		if routing.Refused(err) {
			return "", false, fmt.Errorf("%w: lease: %s: %s: %w", ttl.ErrTransactionNotAllowed, c,
				routing.Explain(op+" (a conditional write of the checkpoint's row)", "", ""), err)
		}
		return "", false, fmt.Errorf("lease: %s of the checkpoint %s: %w", op, c, err)
	}
	if matched != (gen != "") {
		return "", false, nil
	}
	return next, true, nil
}

// set adds to m the replacement of column col's cells by one of value v.
func (c *Checkpoint) set(m *bigtable.Mutation, col, v string) {
	m.DeleteCellsInColumn(Family, col)
	m.Set(Family, col, bigtable.Time(c.now()), []byte(v))
}

// Load returns the record last saved, or nil when there is none, and
// notes the row's generation, which the next Save requires. A process that
// held the lease and finds another's token in the row no longer holds it.
func (c *Checkpoint) Load(ctx context.Context) (*scan.Record, error) {
	c.op.Lock()
	defer c.op.Unlock()
	r, err := c.read(ctx, true)
	if err != nil {
		return nil, err
	}
	c.observe(r.gen, r.lease)
	if r.record == nil {
		return nil, nil
	}
	var rec scan.Record
	if err := json.Unmarshal(r.record, &rec); err != nil {
		return nil, fmt.Errorf("lease: the checkpoint %s does not hold a checkpoint's record: %w", c, err)
	}
	return &rec, nil
}

// Save replaces the record, if the row is as this process last read or
// wrote it, and the lease is this process's or nobody's. It refuses,
// writing nothing, with ErrLeaseLost when this process held the lease and
// no longer does (its deadline passed, or another took it), and with
// ErrStale when another process saved since, or holds the lease.
func (c *Checkpoint) Save(ctx context.Context, rec *scan.Record) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	c.op.Lock()
	defer c.op.Unlock()
	now := c.now()
	c.mu.Lock()
	gen, seen, token, deadline := c.gen, c.seen, c.token, c.deadline
	c.mu.Unlock()
	switch {
	case token != "" && !now.Before(deadline):
		c.drop()
		return fmt.Errorf("%w: saving the checkpoint %s: the lease passed its local deadline %s", ErrLeaseLost, c, deadline.UTC().Format(time.RFC3339Nano))
	case token == "" && seen.token != "" && now.Before(seen.expiry):
		return fmt.Errorf("%w: saving the checkpoint %s: %s holds its lease until %s", ErrStale, c, seen.holder, seen.expiry.UTC().Format(time.RFC3339Nano))
	}
	m := bigtable.NewMutation()
	c.set(m, colRecord, string(b))
	next, ok, err := c.write(ctx, gen, m, "saving")
	if err != nil {
		return err
	}
	if !ok {
		if token != "" {
			c.drop()
			return fmt.Errorf("%w: saving the checkpoint %s: the row changed since this process last wrote it", ErrLeaseLost, c)
		}
		return fmt.Errorf("%w: saving the checkpoint %s: another process wrote the row since this one read it; load it again", ErrStale, c)
	}
	c.mu.Lock()
	c.gen = next
	c.mu.Unlock()
	return nil
}

// observe notes the row read: its generation and lease. A process that
// held the lease and finds another token holds it no longer.
func (c *Checkpoint) observe(gen string, l leaseState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen, c.seen = gen, l
	if c.token != "" && l.token != c.token {
		c.token = ""
	}
}

// drop notes that this process no longer holds the lease.
func (c *Checkpoint) drop() {
	c.mu.Lock()
	c.token = ""
	c.mu.Unlock()
}
