package policy

import (
	"fmt"
	"math"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
)

// TestScanFilter pins the filter a family is scanned with: values
// stripped, and each branch returns at most one cell per row (the version
// count, n+1 per column), restricted to the timestamps the change affects.
func TestScanFilter(t *testing.T) {
	now := time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)
	us := func(t time.Time) int64 { return t.UnixMicro() }
	live48h := us(now.Add(-48*time.Hour)) + 1000
	live72h := us(now.Add(-72*time.Hour)) + 1000
	live1s := us(now.Add(-time.Second)) + 1000
	forever48h := int64(ttl.MaxTimestamp) - (48 * time.Hour).Microseconds()
	forever72h := int64(ttl.MaxTimestamp) - (72 * time.Hour).Microseconds()
	for _, tt := range []struct {
		name  string
		s     ttl.Strategy
		found bigtable.GCPolicy
		want  string
	}{
		{"OneSecond on no GC", ttl.OneSecond(), bigtable.NoGcPolicy(),
			sprintf(`(columnRangeFilter(f,,) | strip_value() | ((timestamp_range(0,946684800000000) | cells_per_row_limit(1) | apply_label(seq)) + (timestamp_range(946684800000000,%d) | cells_per_row_limit(1) | apply_label(expired))))`,
				us(now)+1000)},
		{"shorter default", ttl.DefaultExpiration(48 * time.Hour), bigtable.MaxAgePolicy(72 * time.Hour),
			sprintf(`(columnRangeFilter(f,,) | strip_value() | ((timestamp_range(%d,%d) | cells_per_row_limit(1) | apply_label(expired)) + (timestamp_range(%d,%d) | cells_per_row_limit(1) | apply_label(earlier))))`,
				live72h, live48h, live48h, forever72h)},
		{"OneSecond on an age policy", ttl.OneSecond(), bigtable.MaxAgePolicy(48 * time.Hour),
			sprintf(`(columnRangeFilter(f,,) | strip_value() | ((timestamp_range(%d,%d) | cells_per_row_limit(1) | apply_label(expired)) + (timestamp_range(%d,%d) | cells_per_row_limit(1) | apply_label(earlier))))`,
				live48h, us(now)+1000, us(now)+1000, forever48h)},
		// maxage=1s is OneSecond's own: nothing expires sooner.
		{"OneSecond, versions dropped", ttl.OneSecond(), bigtable.UnionPolicy(bigtable.MaxAgePolicy(time.Second), bigtable.MaxVersionsPolicy(1)), `<nil>`},
		{"OneSecond given a grace", ttl.Grace(ttl.OneSecond(), time.Hour), bigtable.MaxAgePolicy(time.Second), `<nil>`},
		{"DefaultExpiration given a grace", ttl.Grace(ttl.DefaultExpiration(48*time.Hour), time.Hour), bigtable.MaxAgePolicy(48 * time.Hour), `<nil>`},
		{"grace taken off", ttl.DefaultExpiration(48 * time.Hour), bigtable.MaxAgePolicy(72 * time.Hour),
			sprintf(`(columnRangeFilter(f,,) | strip_value() | ((timestamp_range(%d,%d) | cells_per_row_limit(1) | apply_label(expired)) + (timestamp_range(%d,%d) | cells_per_row_limit(1) | apply_label(earlier))))`,
				live72h, live48h, live48h, forever72h)},
		{"longer default", ttl.DefaultExpiration(72 * time.Hour), bigtable.MaxAgePolicy(48 * time.Hour),
			sprintf(`(columnRangeFilter(f,,) | strip_value() | timestamp_range(%d,%d) | cells_per_row_limit(1) | apply_label(back))`, live72h, live48h)},
		{"OneSecond to default", ttl.DefaultExpiration(48 * time.Hour), bigtable.MaxAgePolicy(time.Second),
			sprintf(`(columnRangeFilter(f,,) | strip_value() | timestamp_range(%d,%d) | cells_per_row_limit(1) | apply_label(back))`, live48h, live1s)},
		{"same age, versions dropped", ttl.DefaultExpiration(48 * time.Hour),
			bigtable.UnionPolicy(bigtable.MaxAgePolicy(48*time.Hour), bigtable.MaxVersionsPolicy(1)), `<nil>`},
		{"sequence numbers on no GC", ttl.SequenceNumbers(3), bigtable.NoGcPolicy(),
			`(columnRangeFilter(f,,) | strip_value() | ((timestamp_range(946684800000000,0) | cells_per_row_limit(1) | apply_label(realtime)) + (col(*,4) | apply_label(versions))))`},
		{"sequence numbers, the most versions", ttl.SequenceNumbers(math.MaxInt32), bigtable.NoGcPolicy(),
			`(columnRangeFilter(f,,) | strip_value() | timestamp_range(946684800000000,0) | cells_per_row_limit(1) | apply_label(realtime))`},
		{"sequence numbers, fewer versions kept", ttl.SequenceNumbers(3), bigtable.MaxVersionsPolicy(2),
			`(columnRangeFilter(f,,) | strip_value() | timestamp_range(946684800000000,0) | cells_per_row_limit(1) | apply_label(realtime))`},
		{"sequence numbers on an age policy", ttl.SequenceNumbers(3), bigtable.MaxAgePolicy(48 * time.Hour),
			sprintf(`(columnRangeFilter(f,,) | strip_value() | ((timestamp_range(%d,0) | cells_per_row_limit(1) | apply_label(realtime)) + (timestamp_range(%d,0) | col(*,4) | apply_label(versions))))`,
				live48h, live48h)},
	} {
		got := "<nil>"
		if f := newLossScan(tt.s, tt.found, now).filter("f"); f != nil {
			got = f.String()
		}
		if got != tt.want {
			t.Errorf("%s: scan filter\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}

var sprintf = fmt.Sprintf
