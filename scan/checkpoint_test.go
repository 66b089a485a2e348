package scan_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/scan"
)

// threeShards is a split of a table on "g" and "p".
func threeShards() ([]scan.Shard, error) {
	return []scan.Shard{{Start: "", End: "g"}, {Start: "g", End: "p"}, {Start: "p", End: ""}}, nil
}

// splitOnce returns a split that fails the test if called more than once.
func splitOnce(t *testing.T) func() ([]scan.Shard, error) {
	calls := 0
	return func() ([]scan.Shard, error) {
		calls++
		if calls > 1 {
			t.Errorf("the table was split %d times", calls)
		}
		return threeShards()
	}
}

// counts is the result the tests record for a shard.
type counts struct {
	Rewritten int `json:"rewritten"`
}

// TestJournal checks a journal's life on one checkpoint: a new record is
// split and saved at once, each Update is saved, a journal opened again on
// the same work resumes the record without splitting the table again, and
// a journal of other work is refused.
func TestJournal(t *testing.T) {
	for name, newCP := range map[string]func(t *testing.T) scan.Checkpoint{
		"memory": func(*testing.T) scan.Checkpoint { return scan.MemoryCheckpoint() },
		"file":   func(t *testing.T) scan.Checkpoint { return scan.FileCheckpoint(filepath.Join(t.TempDir(), "cp.json")) },
	} {
		t.Run(name, func(t *testing.T) {
			cp := newCP(t)
			split := splitOnce(t)
			j, err := scan.OpenJournal(context.Background(), cp, "move f", split)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := threeShards()
			rec, err := cp.Load(context.Background())
			if err != nil || rec == nil {
				t.Fatalf("the new record was not saved at once: %v, %v", rec, err)
			}
			if rec.Work != "move f" || len(rec.Shards) != 3 {
				t.Fatalf("saved record %+v", rec)
			}
			for i, s := range j.Shards() {
				if s.Shard != want[i] || s.Done || s.After != "" || s.Result != nil || s.Pending != nil {
					t.Errorf("new shard %d: %+v, want %v and nothing done", i, s, want[i])
				}
			}
			if scan.Finished(context.Background(), cp, "move f") {
				t.Error("a journal with no shard done is finished")
			}

			// Shard 1 is under way, a batch in flight; shard 0 is done.
			if err := j.Update(context.Background(), 1, "h5", counts{3}, []string{"h6", "h7"}, false); err != nil {
				t.Fatal(err)
			}
			if err := j.Update(context.Background(), 0, "f9", counts{7}, nil, true); err != nil {
				t.Fatal(err)
			}
			s1 := j.State(1)
			if s1.After != "h5" || s1.Done || string(s1.Result) != `{"rewritten":3}` || string(s1.Pending) != `["h6","h7"]` {
				t.Errorf("shard 1: %+v", s1)
			}
			if s0 := j.State(0); !s0.Done || s0.After != "f9" || string(s0.Result) != `{"rewritten":7}` || s0.Pending != nil {
				t.Errorf("shard 0: %+v", s0)
			}
			// Shards is a copy: changing it changes no record.
			shards := j.Shards()
			shards[2].Done = true
			if j.State(2).Done {
				t.Error("changing the slice Shards returned changed the journal")
			}

			// A new run of the same work resumes the record, as saved.
			again, err := scan.OpenJournal(context.Background(), cp, "move f", split)
			if err != nil {
				t.Fatal(err)
			}
			if got := again.Shards(); !sameShards(got, j.Shards()) {
				t.Errorf("resumed %s\nwant %s", dump(got), dump(j.Shards()))
			}
			var c counts
			if err := json.Unmarshal(again.State(0).Result, &c); err != nil || c.Rewritten != 7 {
				t.Errorf("resumed shard 0's result %s: %v", again.State(0).Result, err)
			}

			// Other work is refused, and the record is left as it was.
			if _, err := scan.OpenJournal(context.Background(), cp, "move g", split); !errors.Is(err, ttl.ErrInvalidOption) ||
				!strings.Contains(err.Error(), "move f") {
				t.Errorf("other work: %v, want ErrInvalidOption naming the work recorded", err)
			}
			if scan.Finished(context.Background(), cp, "move g") {
				t.Error("a record of other work is finished")
			}

			for i := 1; i < 3; i++ {
				if err := again.Update(context.Background(), i, "", counts{1}, nil, true); err != nil {
					t.Fatal(err)
				}
			}
			if !scan.Finished(context.Background(), cp, "move f") {
				t.Error("every shard done, not finished")
			}
		})
	}
}

// sameShards reports whether two records of shards are equal, their JSON
// compared as JSON: a file keeps it indented.
func sameShards(a, b []scan.ShardRecord) bool {
	compact := func(m json.RawMessage) string {
		if m == nil {
			return ""
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, m); err != nil {
			return "invalid: " + string(m)
		}
		return buf.String()
	}
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Shard != y.Shard || x.Done != y.Done || x.After != y.After ||
			compact(x.Result) != compact(y.Result) || compact(x.Pending) != compact(y.Pending) {
			return false
		}
	}
	return true
}

// dump prints v as JSON, for failures: a ShardRecord's %v is its shard's.
func dump(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// failing is a checkpoint whose Load or Save fails.
type failing struct {
	scan.Checkpoint
	load, save error
}

func (f failing) Load(ctx context.Context) (*scan.Record, error) {
	if f.load != nil {
		return nil, f.load
	}
	return f.Checkpoint.Load(context.Background())
}

func (f failing) Save(ctx context.Context, r *scan.Record) error {
	if f.save != nil {
		return f.save
	}
	return f.Checkpoint.Save(ctx, r)
}

// TestJournalErrors checks that the errors of the checkpoint, of the
// split and of encoding a result are returned.
func TestJournalErrors(t *testing.T) {
	broken := errors.New("broken")
	if _, err := scan.OpenJournal(context.Background(), failing{scan.MemoryCheckpoint(), broken, nil}, "w", threeShards); !errors.Is(err, broken) {
		t.Errorf("Load failing: %v", err)
	}
	if _, err := scan.OpenJournal(context.Background(), failing{scan.MemoryCheckpoint(), nil, broken}, "w", threeShards); !errors.Is(err, broken) {
		t.Errorf("Save failing: %v", err)
	}
	noSplit := func() ([]scan.Shard, error) { return nil, broken }
	if _, err := scan.OpenJournal(context.Background(), scan.MemoryCheckpoint(), "w", noSplit); !errors.Is(err, broken) {
		t.Errorf("split failing: %v", err)
	}

	cp := &failing{Checkpoint: scan.MemoryCheckpoint()}
	j, err := scan.OpenJournal(context.Background(), cp, "w", threeShards)
	if err != nil {
		t.Fatal(err)
	}
	cp.save = broken
	if err := j.Update(context.Background(), 0, "a", counts{1}, nil, false); !errors.Is(err, broken) {
		t.Errorf("Update with Save failing: %v", err)
	}
	var unsupported *json.UnsupportedTypeError
	if err := j.Update(context.Background(), 0, "a", func() {}, nil, false); !errors.As(err, &unsupported) {
		t.Errorf("Update of a result JSON cannot encode: %v", err)
	}
	if err := j.Update(context.Background(), 0, "a", counts{1}, make(chan int), false); !errors.As(err, &unsupported) {
		t.Errorf("Update of pending changes JSON cannot encode: %v", err)
	}
}

// TestFinished checks what Finished makes of checkpoints that record no
// finished work.
func TestFinished(t *testing.T) {
	if scan.Finished(context.Background(), nil, "w") {
		t.Error("a nil checkpoint is finished")
	}
	if scan.Finished(context.Background(), scan.MemoryCheckpoint(), "w") {
		t.Error("an empty checkpoint is finished")
	}
	if scan.Finished(context.Background(), failing{scan.MemoryCheckpoint(), errors.New("unreadable"), nil}, "w") {
		t.Error("an unreadable checkpoint is finished")
	}
	done := scan.MemoryCheckpoint()
	if err := done.Save(context.Background(), &scan.Record{Work: "w", Shards: []scan.ShardRecord{{Done: true}, {Done: true}}}); err != nil {
		t.Fatal(err)
	}
	if !scan.Finished(context.Background(), done, "w") || scan.Finished(context.Background(), done, "v") {
		t.Error("Finished does not tell the work recorded as done from other work")
	}
}

// TestFileCheckpoint checks the file: none before the first Save, the
// record read back as saved, JSON a person can read, no temporary file
// left behind, and the errors of an unreadable, corrupt or unwritable
// file.
func TestFileCheckpoint(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cp.json")
	cp := scan.FileCheckpoint(path)
	if rec, err := cp.Load(context.Background()); rec != nil || err != nil {
		t.Fatalf("Load before any Save = %v, %v; want nil, nil", rec, err)
	}
	rec := &scan.Record{Work: "move f", Shards: []scan.ShardRecord{
		{Shard: scan.Shard{End: "m"}, Done: true, After: "l", Result: json.RawMessage(`{"n":1}`)},
		{Shard: scan.Shard{Start: "m"}, Pending: json.RawMessage(`[1,2]`)},
	}}
	if err := cp.Save(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	// A checkpoint on the same file, as a resumed run opens it.
	got, err := scan.FileCheckpoint(path).Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got.Work != rec.Work || !sameShards(got.Shards, rec.Shards) {
		t.Errorf("Load = %s, want %s", dump(got), dump(rec))
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(b), "}\n") || !strings.Contains(string(b), `"work": "move f"`) {
		t.Errorf("the file is not indented JSON ending in a newline:\n%s", b)
	}
	// A second Save replaces the record.
	rec.Shards[1].Done = true
	if err := cp.Save(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	if got, err := cp.Load(context.Background()); err != nil || !got.Shards[1].Done {
		t.Errorf("after the second Save: %+v, %v", got, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the directory holds %d files, want the checkpoint alone: %v", len(entries), entries)
	}

	// A record JSON cannot encode is not saved, and the file is kept.
	if err := cp.Save(context.Background(), &scan.Record{Work: "x", Shards: []scan.ShardRecord{{Result: json.RawMessage("{")}}}); err == nil {
		t.Error("Save of a record with invalid JSON in it succeeded")
	}
	if got, err := cp.Load(context.Background()); err != nil || got.Work != "move f" {
		t.Errorf("after a failed Save: %+v, %v", got, err)
	}

	// A corrupt file is not a record.
	if err := os.WriteFile(path, []byte(`{"work": "move f", "shards": [`), 0o600); err != nil {
		t.Fatal(err)
	}
	var syntax *json.SyntaxError
	if _, err := cp.Load(context.Background()); !errors.As(err, &syntax) || !strings.Contains(err.Error(), "is not a checkpoint's record") {
		t.Errorf("Load of a corrupt file: %v", err)
	}

	// A directory can be neither read nor replaced.
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := scan.FileCheckpoint(sub).Load(context.Background()); err == nil || !strings.Contains(err.Error(), "reading checkpoint") {
		t.Errorf("Load of a directory: %v", err)
	}
	if err := scan.FileCheckpoint(sub).Save(context.Background(), rec); err == nil || !strings.Contains(err.Error(), "writing checkpoint") {
		t.Errorf("Save over a directory: %v", err)
	}
	if err := scan.FileCheckpoint(filepath.Join(dir, "missing", "cp.json")).Save(context.Background(), rec); err == nil ||
		!strings.Contains(err.Error(), "writing checkpoint") {
		t.Errorf("Save in a directory that does not exist: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("failed Saves left files behind: %v", entries)
	}
}

// TestJournalRounds checks work that repeats in rounds: a round's state
// and fresh shards are saved together, a journal opened again resumes the
// round with its state, and a failing Save leaves the round as it was.
func TestJournalRounds(t *testing.T) {
	cp := scan.FileCheckpoint(filepath.Join(t.TempDir(), "cp.json"))
	j, err := scan.OpenJournal(context.Background(), cp, "sweep t", threeShards)
	if err != nil {
		t.Fatal(err)
	}
	type window struct{ From, Until int }
	var w window
	if ok, err := j.LoadState(&w); ok || err != nil {
		t.Fatalf("LoadState of a new record = %v, %v", ok, err)
	}
	if err := j.Update(context.Background(), 1, "k", counts{2}, nil, true); err != nil {
		t.Fatal(err)
	}
	two := []scan.Shard{{End: "m"}, {Start: "m"}}
	if err := j.NextRound(context.Background(), two, window{10, 20}); err != nil {
		t.Fatal(err)
	}
	again, err := scan.OpenJournal(context.Background(), cp, "sweep t", func() ([]scan.Shard, error) {
		t.Error("a resumed round was split again")
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := again.LoadState(&w); !ok || err != nil || w != (window{10, 20}) {
		t.Errorf("LoadState = %v, %v, %+v want the round's window", ok, err, w)
	}
	got := again.Shards()
	if len(got) != 2 || got[0].Shard != two[0] || got[1].Shard != two[1] || got[0].Done || got[1].Done || got[1].After != "" {
		t.Errorf("the round's shards = %+v want %v, fresh", got, two)
	}

	bad := &failing{Checkpoint: scan.MemoryCheckpoint()}
	j, err = scan.OpenJournal(context.Background(), bad, "sweep t", threeShards)
	if err != nil {
		t.Fatal(err)
	}
	bad.save = errors.New("broken")
	if err := j.NextRound(context.Background(), two, window{1, 2}); err == nil {
		t.Error("NextRound with Save failing succeeded")
	}
	if ok, _ := j.LoadState(&w); ok || len(j.Shards()) != 3 {
		t.Error("a NextRound that failed to save changed the journal")
	}
	if err := j.NextRound(context.Background(), two, make(chan int)); err == nil {
		t.Error("NextRound of a state JSON cannot encode succeeded")
	}
	other := scan.MemoryCheckpoint()
	if err := other.Save(context.Background(), &scan.Record{Work: "sweep t", State: json.RawMessage(`"not a window"`)}); err != nil {
		t.Fatal(err)
	}
	if j, err = scan.OpenJournal(context.Background(), other, "sweep t", threeShards); err != nil {
		t.Fatal(err)
	}
	if ok, err := j.LoadState(&w); ok || err == nil {
		t.Errorf("LoadState of another work's state = %v, %v want an error", ok, err)
	}
}

// TestMemoryCheckpointCopies: a memory checkpoint keeps what was saved,
// as a file does, whatever is done to the record after, or to the one a
// Load returned.
func TestMemoryCheckpointCopies(t *testing.T) {
	cp := scan.MemoryCheckpoint()
	rec := &scan.Record{Work: "w", Shards: []scan.ShardRecord{{Shard: scan.Shard{End: "m"}}}}
	if err := cp.Save(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	rec.Shards[0].Done = true
	loaded, _ := cp.Load(context.Background())
	loaded.Shards[0].After = "k"
	again, _ := cp.Load(context.Background())
	if again.Shards[0].Done || again.Shards[0].After != "" {
		t.Errorf("the saved record changed with its copies: %+v", again.Shards[0])
	}
}

// TestFileCheckpointCrashLeftovers reproduces finding 6 of issue 21: a run
// killed during a Save leaves the Save's temporary file (the checkpoint's
// name, a dot and digits) beside the checkpoint. The next Load removes it,
// and so does the next Save, and no other file is touched.
func TestFileCheckpointCrashLeftovers(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rewrite.json")
	cp := scan.FileCheckpoint(path)
	if err := cp.Save(context.Background(), &scan.Record{Work: "move f"}); err != nil {
		t.Fatal(err)
	}
	// What a Save killed between its write and its rename leaves, and
	// files that are not its temporaries.
	write := func(names ...string) {
		for _, name := range names {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(`{"work": "move f", "sha`), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	keep := []string{"rewrite.json", "rewrite.json.bak", "rewrite.json.12a", "rewrite.json.", "other.json.1234", "xrewrite.json.1234"}
	write(keep[1:]...)
	write("rewrite.json.1234567", "rewrite.json.42")
	left := func() []string {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}
	rec, err := scan.FileCheckpoint(path).Load(context.Background())
	if err != nil || rec == nil || rec.Work != "move f" {
		t.Fatalf("Load = %+v, %v; want the saved record", rec, err)
	}
	if got := left(); !sameNames(got, keep) {
		t.Errorf("after Load the directory holds %q, want %q", got, keep)
	}

	// The next Save cleans up too, when no Load came first.
	write("rewrite.json.99")
	if err := scan.FileCheckpoint(path).Save(context.Background(), &scan.Record{Work: "move f"}); err != nil {
		t.Fatal(err)
	}
	if got := left(); !sameNames(got, keep) {
		t.Errorf("after Save the directory holds %q, want %q", got, keep)
	}

	// A checkpoint in a directory that does not exist has nothing to
	// clean: Load finds no record.
	if rec, err := scan.FileCheckpoint(filepath.Join(dir, "missing", "cp.json")).Load(context.Background()); rec != nil || err != nil {
		t.Errorf("Load in a missing directory = %v, %v", rec, err)
	}
}

// sameNames reports whether a and b hold the same names, in any order.
func sameNames(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	count := map[string]int{}
	for _, n := range a {
		count[n]++
	}
	for _, n := range b {
		count[n]--
	}
	for _, c := range count {
		if c != 0 {
			return false
		}
	}
	return true
}
