package text

import (
	"encoding/json"
	"testing"
	"time"
)

func TestText(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{Plural(1, "row", "rows"), "1 row"},
		{Plural(0, "row", "rows"), "0 rows"},
		{Plural(3, "row holds", "rows hold"), "3 rows hold"},
		{Time(time.Date(2030, 4, 30, 11, 0, 0, 123456789, time.FixedZone("CEST", 2*3600))), "2030-04-30T09:00:00.123Z"},
		{Metric(950), "950"},
		{Metric(12_345), "12.3k"},
		{Metric(4_500_000), "4.5M"},
		{Metric(1_200_000_000), "1.2G"},
		{Bytes(512), "512 B"},
		{Bytes(1536), "1.5 KiB"},
		{Bytes(3 << 20), "3.0 MiB"},
		{Bytes(5 << 40), "5.0 TiB"},
		{Bytes(1 << 62), "4096.0 PiB"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

func TestNearest(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"sess", "sesss", 1}, {"sess", "sses", 2}, {"kitten", "sitting", 3}, {"", "abc", 3}, {"é", "e", 1}} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Distance(c.b, c.a); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.b, c.a, got, c.want)
		}
	}
	families := []string{"clicks", "meta", "sess"}
	for name, want := range map[string]string{"sesss": "sess", "ses": "sess", "clics": "clicks", "mta": "meta",
		"sess": "", "visits": "", "xyzw": ""} {
		if got := Nearest(name, families, 2); got != want {
			t.Errorf("Nearest(%q) = %q, want %q", name, got, want)
		}
	}
	if got := Nearest("ab", []string{"ax", "xb"}, 2); got != "ax" {
		t.Errorf("a tie: Nearest = %q, want the first, ax", got)
	}
}

func TestServer(t *testing.T) {
	if got, want := Server("", "p", "i"), `Cloud Bigtable, project "p" instance "i" (-project, -instance)`; got != want {
		t.Errorf("Server = %q, want %q", got, want)
	}
	if got, want := Server("localhost:1", "p", "i"), "the emulator at BIGTABLE_EMULATOR_HOST=localhost:1"; got != want {
		t.Errorf("Server = %q, want %q", got, want)
	}
}

// TestDuration: durations are written as Go duration strings and read
// back, from strings or, as earlier releases wrote them, nanoseconds;
// anything else is refused.
func TestDuration(t *testing.T) {
	for _, d := range []time.Duration{0, time.Millisecond, time.Second, 90 * time.Minute, -time.Second, 49 * time.Hour} {
		b, err := json.Marshal(Duration(d))
		if err != nil || string(b) != `"`+d.String()+`"` {
			t.Errorf("Marshal(%v) = %s, %v", d, b, err)
		}
		var back Duration
		if err := json.Unmarshal(b, &back); err != nil || time.Duration(back) != d {
			t.Errorf("Unmarshal(%s) = %v, %v", b, time.Duration(back), err)
		}
	}
	var d Duration
	if err := json.Unmarshal([]byte("1000000000"), &d); err != nil || time.Duration(d) != time.Second {
		t.Errorf("Unmarshal(1000000000) = %v, %v", time.Duration(d), err)
	}
	for _, bad := range []string{`"a second"`, `true`, `1.5`, `{}`} {
		if err := json.Unmarshal([]byte(bad), &d); err == nil {
			t.Errorf("Unmarshal(%s) accepted: %v", bad, time.Duration(d))
		}
	}
}

// TestOpenEnds checks that a zero bound becomes an open end (nil) and any
// other is kept, so that JSON leaves out only the open ends.
func TestOpenEnds(t *testing.T) {
	at := time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)
	for _, c := range []struct{ from, until time.Time }{{}, {at, time.Time{}}, {time.Time{}, at}, {at, at.Add(time.Hour)}} {
		f, u := OpenEnds(c.from, c.until)
		if (f == nil) != c.from.IsZero() || f != nil && !f.Equal(c.from) {
			t.Errorf("OpenEnds(%v, %v): from %v", c.from, c.until, f)
		}
		if (u == nil) != c.until.IsZero() || u != nil && !u.Equal(c.until) {
			t.Errorf("OpenEnds(%v, %v): until %v", c.from, c.until, u)
		}
	}
}
