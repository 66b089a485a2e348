package ttltest

import (
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
)

// TestInstance: the names users are given are the emulator's.
func TestInstance(t *testing.T) {
	if Project != emulator.Project || Instance != emulator.Instance {
		t.Errorf("Project, Instance = %q, %q; the emulator's clients use %q, %q", Project, Instance, emulator.Project, emulator.Instance)
	}
}

// TestCollectableEdges: the rules no emulator table can hold, and the
// delete range of the last millisecond.
func TestCollectableEdges(t *testing.T) {
	at := DefaultStart
	cells := []stored{{key: cellKey{ts: 2000}, seen: at}, {key: cellKey{ts: 1000}, seen: at}}
	for _, c := range []struct {
		name string
		p    bigtable.GCPolicy
		want bool
	}{
		{"an empty union", bigtable.UnionPolicy(), false},
		{"an empty intersection", bigtable.IntersectionPolicy(), false},
		{"no GC", bigtable.NoGcPolicy(), false},
		{"no family", nil, false},
		{"maxversions=0", bigtable.MaxVersionsPolicy(0), true},
		{"maxversions=1", bigtable.MaxVersionsPolicy(1), true},
	} {
		if got := collectable(c.p, cells, 1, at); got != c.want {
			t.Errorf("%s: the older cell collectable %v, want %v", c.name, got, c.want)
		}
	}
	if collectable(bigtable.MaxVersionsPolicy(1), cells, 1, at.Add(-time.Millisecond)) {
		t.Errorf("collectable before the cells were seen")
	}
	if got := end(ttl.MaxTimestamp); got != 0 {
		t.Errorf("end(MaxTimestamp) = %d, want 0 (no end)", got)
	}
	if got := end(5000); got != 6000 {
		t.Errorf("end(5000) = %d, want 6000", got)
	}
}
