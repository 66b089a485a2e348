package pipeline

import (
	"errors"
	"strings"
	"testing"
)

// values returns a side input of the values given.
func values(vs ...int64) func(*int64) bool {
	return func(v *int64) bool {
		if len(vs) == 0 {
			return false
		}
		*v, vs = vs[0], vs[1:]
		return true
	}
}

// TestAfterDeletedCounts: a bundle of entries served starts, and passes
// them on to be deleted, only when the events were written and the rows
// deleted add up to the rows the salts' workers sent, so that a runner
// that runs the step though a deletion failed (as Prism may) deletes no
// entry.
func TestAfterDeletedCounts(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		written, given, handled func(*int64) bool
		want                    error
	}{
		{"all deleted", values(7), values(3, 0, 2), values(4, 1), nil},
		{"nothing to delete", values(0), values(0, 0), values(), nil},
		{"a batch missing", values(7), values(3, 0, 2), values(4), errNotDeleted},
		{"none deleted", values(7), values(1), values(), errNotDeleted},
		{"events not written", values(), values(1), values(1), errNotWritten},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fn := &afterDeletedFn{Schedule: "events_sched"}
			err := fn.StartBundle(tc.written, tc.given, tc.handled)
			if !errors.Is(err, tc.want) {
				t.Fatalf("error %v; want %v", err, tc.want)
			}
			if errors.Is(err, errNotDeleted) && !strings.Contains(err.Error(), `schedule table "events_sched"`) {
				t.Errorf("error %v does not name the schedule table", err)
			}
			if err == nil {
				if key := fn.ProcessElement([]byte("k"), nil, nil, nil); string(key) != "k" {
					t.Errorf("key %q; want k", key)
				}
			}
		})
	}
}
