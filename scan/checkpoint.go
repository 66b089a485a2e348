package scan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/cellttl/ttl/internal/rules"
)

// A Checkpoint keeps the record of table-wide work that writes (a strategy
// move's rewrite): the shards it split the table into, which of them are
// finished and what each did, and the changes it is about to make. An
// interrupted run given the same checkpoint resumes where it stopped:
// finished shards are not read again, their counts are kept, and a change
// recorded before it was made is not made twice (see Journal).
//
// FileCheckpoint keeps the record in a file; package lease keeps it in a
// Bigtable row, for a tool that runs as a service. Implementations must be
// safe for use by one run at a time; Save must replace the record
// atomically. ctx bounds a checkpoint kept remotely; a file ignores it.
type Checkpoint interface {
	// Load returns the record last saved, or nil when there is none.
	Load(ctx context.Context) (*Record, error)
	// Save replaces the record. A checkpoint that can tell may refuse a
	// Save that would overwrite a record saved since its Load by another
	// process, writing nothing.
	Save(ctx context.Context, r *Record) error
}

// A Record is what a Checkpoint keeps.
type Record struct {
	// Work says what the work is, so that a record is never resumed by
	// other work: the table, the family, the move.
	Work string `json:"work"`
	// Shards are the shards of the table the work reads, in row order,
	// each with its state.
	Shards []ShardRecord `json:"shards"`
	// State is what work that repeats in rounds keeps between them,
	// besides its shards (a sweep's watermark and the window of its
	// round), as JSON; empty for other work. See Journal.NextRound.
	State json.RawMessage `json:"state,omitempty"`
}

// A ShardRecord is the state of one shard of recorded work.
type ShardRecord struct {
	// Shard is the range of rows recorded.
	Shard
	// Done reports that the shard is finished.
	Done bool `json:"done"`
	// After is the last row of the shard whose changes are made and
	// counted in Result; "" before the first.
	After string `json:"after,omitempty"`
	// Result is what the work did in the shard up to After, or in the
	// whole shard once Done.
	Result json.RawMessage `json:"result,omitempty"`
	// Pending are the changes the work was making after After when the
	// record was saved: recorded before they are made, so that a resumed
	// run can tell which were made.
	Pending json.RawMessage `json:"pending,omitempty"`
}

// FileCheckpoint returns a Checkpoint that keeps its record in the file at
// path, as JSON, replacing it atomically (a new file renamed over the old)
// on every Save. The file is created by the first Save.
//
// A Save writes the new record to a temporary file beside path, named
// path's base, a dot and digits (rewrite.json.123456), and renames it over
// path. A run killed during a Save leaves that temporary file behind: the
// next Load or Save removes every file of that pattern beside path, and
// no other file.
func FileCheckpoint(path string) Checkpoint { return &fileCheckpoint{path: path} }

type fileCheckpoint struct {
	mu   sync.Mutex
	path string
}

func (c *fileCheckpoint) Load(context.Context) (*Record, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.removeStale(); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(c.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("scan: reading checkpoint: %w", err)
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("scan: checkpoint %s is not a checkpoint's record: %w", c.path, err)
	}
	return &r, nil
}

func (c *fileCheckpoint) Save(_ context.Context, r *Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return err
	}
	if err := c.removeStale(); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(c.path), filepath.Base(c.path)+".*")
	if err != nil {
		return fmt.Errorf("scan: writing checkpoint: %w", err)
	}
	defer os.Remove(tmp.Name()) // fails once renamed
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("scan: writing checkpoint: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("scan: writing checkpoint: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("scan: writing checkpoint: %w", err)
	}
	if err := os.Rename(tmp.Name(), c.path); err != nil {
		return fmt.Errorf("scan: writing checkpoint: %w", err)
	}
	return nil
}

// removeStale removes the temporary files that Saves killed before their
// rename left beside the checkpoint: its base name, a dot, and only
// digits, as os.CreateTemp names them.
func (c *fileCheckpoint) removeStale() error {
	dir, base := filepath.Dir(c.path), filepath.Base(c.path)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("scan: reading the checkpoint's directory: %w", err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !isTemporary(e.Name(), base) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("scan: removing a temporary file a crashed save left: %w", err)
		}
	}
	return nil
}

// isTemporary reports whether name is a temporary file of the checkpoint
// named base: base, a dot, and one or more digits.
func isTemporary(name, base string) bool {
	rest, ok := strings.CutPrefix(name, base+".")
	if !ok || rest == "" {
		return false
	}
	for _, r := range rest {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// A Journal is the record of one run of work that writes, shared by its
// workers. The work saves the changes it is about to make before it makes
// them, and its progress after (Update): a resumed run then knows which
// shards are finished, where each other one stopped, and which changes
// were in flight.
type Journal struct {
	mu  sync.Mutex
	cp  Checkpoint
	rec *Record
}

// OpenJournal loads the record of work from cp, or starts one with the
// shards split returns, saved at once. It refuses, with
// ttl.ErrInvalidOption, a record of other work.
func OpenJournal(ctx context.Context, cp Checkpoint, work string, split func() ([]Shard, error)) (*Journal, error) {
	rec, err := cp.Load(ctx)
	if err != nil {
		return nil, err
	}
	if rec != nil && rec.Work != work {
		return nil, fmt.Errorf("%w: the checkpoint records other work (%s), not %s; give this work a checkpoint of its own",
			rules.ErrInvalidOption, rec.Work, work)
	}
	if rec == nil {
		shards, err := split()
		if err != nil {
			return nil, err
		}
		rec = &Record{Work: work, Shards: make([]ShardRecord, len(shards))}
		for i, s := range shards {
			rec.Shards[i].Shard = s
		}
		if err := cp.Save(ctx, rec); err != nil {
			return nil, err
		}
	}
	return &Journal{cp: cp, rec: rec}, nil
}

// Shards returns the record of every shard, in row order.
func (j *Journal) Shards() []ShardRecord {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]ShardRecord(nil), j.rec.Shards...)
}

// State returns shard i's record.
func (j *Journal) State(i int) ShardRecord {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.rec.Shards[i]
}

// Update records shard i's progress and saves the record: the last row
// done, the result so far, the changes about to be made (nil for none),
// and whether the shard is finished. result and pending are encoded as
// JSON.
func (j *Journal) Update(ctx context.Context, i int, after string, result, pending any, done bool) error {
	r, err := json.Marshal(result)
	if err != nil {
		return err
	}
	var p json.RawMessage
	if pending != nil {
		if p, err = json.Marshal(pending); err != nil {
			return err
		}
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	s := &j.rec.Shards[i]
	s.After, s.Result, s.Pending, s.Done = after, r, p, done
	return j.cp.Save(ctx, j.rec)
}

// LoadState decodes the record's State into v, and reports false, leaving
// v alone, when the record has none.
func (j *Journal) LoadState(v any) (bool, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.rec.State) == 0 {
		return false, nil
	}
	if err := json.Unmarshal(j.rec.State, v); err != nil {
		return false, fmt.Errorf("scan: the checkpoint's state is not this work's: %w", err)
	}
	return true, nil
}

// NextRound starts the next round of work that repeats (a sweep, every
// period): the record's shards are replaced by fresh ones, none done, and
// its State by state, encoded as JSON, in one Save. A run that resumes
// from the record resumes this round.
func (j *Journal) NextRound(ctx context.Context, shards []Shard, state any) error {
	b, err := json.Marshal(state)
	if err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	rec := &Record{Work: j.rec.Work, Shards: make([]ShardRecord, len(shards)), State: b}
	for i, s := range shards {
		rec.Shards[i].Shard = s
	}
	if err := j.cp.Save(ctx, rec); err != nil {
		return err
	}
	j.rec = rec
	return nil
}

// Finished reports whether cp records work as finished: every shard done.
// A nil cp, an unreadable one or a record of other work is not.
func Finished(ctx context.Context, cp Checkpoint, work string) bool {
	if cp == nil {
		return false
	}
	rec, err := cp.Load(ctx)
	if err != nil || rec == nil || rec.Work != work {
		return false
	}
	for _, s := range rec.Shards {
		if !s.Done {
			return false
		}
	}
	return true
}

// MemoryCheckpoint returns a Checkpoint that keeps its record in memory,
// for work that needs a journal but not one that outlives the run (a dry
// run, say).
func MemoryCheckpoint() Checkpoint { return &memoryCheckpoint{} }

type memoryCheckpoint struct {
	mu  sync.Mutex
	rec *Record
}

// Load and Save copy the record, as a file would: a journal changes its
// record in place, and a Save that failed must not be seen to succeed.
func (c *memoryCheckpoint) Load(context.Context) (*Record, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rec.copy(), nil
}

func (c *memoryCheckpoint) Save(_ context.Context, r *Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rec = r.copy()
	return nil
}

// copy returns a copy of r that shares nothing a journal changes.
func (r *Record) copy() *Record {
	if r == nil {
		return nil
	}
	c := *r
	c.Shards = append([]ShardRecord(nil), r.Shards...)
	return &c
}
