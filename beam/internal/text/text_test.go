package text

import (
	"testing"
	"time"
)

// TestSpelling checks each spelling against the root tools' (see
// internal/text of the root module): the same input reads the same.
func TestSpelling(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{Plural(1, "row", "rows"), "1 row"},
		{Plural(0, "row", "rows"), "0 rows"},
		{Plural(3, "entry", "entries"), "3 entries"},
		{Time(time.Date(2030, 4, 30, 11, 0, 0, 0, time.FixedZone("CEST", 2*3600))), "2030-04-30T09:00:00.000Z"},
		{Bytes(512), "512 B"},
		{Bytes(1536), "1.5 KiB"},
		{Bytes(3 << 20), "3.0 MiB"},
		{Bytes(1 << 62), "4096.0 PiB"},
		{Server("localhost:8086", "p", "i"), "the emulator at BIGTABLE_EMULATOR_HOST=localhost:8086"},
		{Server("", "p", "i"), `Cloud Bigtable, project "p" instance "i" (-project, -instance)`},
	} {
		if tt.got != tt.want {
			t.Errorf("%q, want %q", tt.got, tt.want)
		}
	}
}
