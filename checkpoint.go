package ttl

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// A Checkpoint keeps the record of table-wide work that writes (a move's
// rewrite): the shards it split the table into, which of them are
// finished and what each did, and the changes it is about to make. An
// interrupted run given the same checkpoint resumes where it stopped:
// finished shards are not read again, their counts are kept, and a change
// recorded before it was made is not made twice.
//
// FileCheckpoint keeps the record in a file. Implementations must be safe
// for use by one run at a time; Save must replace the record atomically.
type Checkpoint interface {
	// Load returns the record last saved, or nil when there is none.
	Load() (*Record, error)
	// Save replaces the record.
	Save(*Record) error
}

// A Record is what a Checkpoint keeps.
type Record struct {
	// Work says what the work is, so that a record is never resumed by
	// other work: the table, the family, the move.
	Work string `json:"work"`
	// Shards are the shards of the table the work reads, in row order,
	// each with its state.
	Shards []ShardRecord `json:"shards"`
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
func FileCheckpoint(path string) Checkpoint { return &fileCheckpoint{path: path} }

type fileCheckpoint struct {
	mu   sync.Mutex
	path string
}

func (c *fileCheckpoint) Load() (*Record, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, err := os.ReadFile(c.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("ttl: reading checkpoint: %w", err)
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("ttl: checkpoint %s is not a checkpoint's record: %w", c.path, err)
	}
	return &r, nil
}

func (c *fileCheckpoint) Save(r *Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(c.path), filepath.Base(c.path)+".*")
	if err != nil {
		return fmt.Errorf("ttl: writing checkpoint: %w", err)
	}
	defer os.Remove(tmp.Name()) // fails once renamed
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("ttl: writing checkpoint: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("ttl: writing checkpoint: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("ttl: writing checkpoint: %w", err)
	}
	if err := os.Rename(tmp.Name(), c.path); err != nil {
		return fmt.Errorf("ttl: writing checkpoint: %w", err)
	}
	return nil
}

// A journal is the record of one run of work that writes, shared by its
// workers: it saves the record whenever a shard finishes or a change is
// about to be made.
type journal struct {
	mu  sync.Mutex
	cp  Checkpoint
	rec *Record
}

// openJournal loads the record of work from cp, or starts one with the
// shards split returns. It refuses a record of other work.
func openJournal(cp Checkpoint, work string, split func() ([]Shard, error)) (*journal, error) {
	rec, err := cp.Load()
	if err != nil {
		return nil, err
	}
	if rec != nil && rec.Work != work {
		return nil, fmt.Errorf("%w: the checkpoint records other work (%s), not %s; give this work a checkpoint of its own",
			ErrInvalidOption, rec.Work, work)
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
		if err := cp.Save(rec); err != nil {
			return nil, err
		}
	}
	return &journal{cp: cp, rec: rec}, nil
}

// state returns shard i's record.
func (j *journal) state(i int) ShardRecord {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.rec.Shards[i]
}

// progress records shard i's progress: the last row done, the result so
// far, the changes about to be made (nil for none), and whether the shard
// is finished.
func (j *journal) progress(i int, after string, result, pending any, done bool) error {
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
	return j.cp.Save(j.rec)
}

// memoryCheckpoint keeps a record for one run only.
type memoryCheckpoint struct{ rec *Record }

func (c *memoryCheckpoint) Load() (*Record, error) { return c.rec, nil }
func (c *memoryCheckpoint) Save(r *Record) error   { c.rec = r; return nil }
