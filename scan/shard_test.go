package scan

import (
	"fmt"
	"reflect"
	"testing"
)

// TestSplitOn checks that shards cover every row once, in order, on the
// boundaries given, and that too many boundaries are thinned evenly.
func TestSplitOn(t *testing.T) {
	for _, tt := range []struct {
		keys []string
		max  int
		want []Shard
	}{
		{nil, 8, []Shard{{"", ""}}},
		{[]string{""}, 8, []Shard{{"", ""}}},
		{[]string{"m"}, 8, []Shard{{"", "m"}, {"m", ""}}},
		{[]string{"t", "c", "m", "c", ""}, 8, []Shard{{"", "c"}, {"c", "m"}, {"m", "t"}, {"t", ""}}},
		{[]string{"a", "b", "c", "d", "e", "f", "g", "h"}, 3, []Shard{{"", "c"}, {"c", "f"}, {"f", ""}}},
	} {
		if got := splitOn(tt.keys, tt.max); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("splitOn(%q, %d) = %v want %v", tt.keys, tt.max, got, tt.want)
		}
	}
	// However many boundaries, at most max shards, contiguous.
	for n := 0; n < 3000; n += 7 {
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprintf("k%05d", i)
		}
		shards := splitOn(keys, 64)
		if len(shards) > 64 || len(shards) != min(n, 63)+1 {
			t.Fatalf("%d keys: %d shards", n, len(shards))
		}
		if shards[0].Start != "" || shards[len(shards)-1].End != "" {
			t.Fatalf("%d keys: shards do not reach both ends: %v", n, shards)
		}
		for i := 1; i < len(shards); i++ {
			if shards[i].Start != shards[i-1].End || shards[i].Start <= shards[i-1].Start {
				t.Fatalf("%d keys: shards %v and %v are not contiguous", n, shards[i-1], shards[i])
			}
		}
	}
}
