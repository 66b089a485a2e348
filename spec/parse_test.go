package spec

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cellttl/ttl"
)

// TestParse checks the strategy specs (the three, and counters of the
// first two), and that every malformed one
// is refused with a message that says what was wanted.
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want ttl.Strategy
		err  string
	}{
		{"onesecond", ttl.OneSecond(), ""},
		{"default:48h", ttl.DefaultExpiration(48 * time.Hour), ""},
		{"default:90m", ttl.DefaultExpiration(90 * time.Minute), ""},
		{"default:30d", ttl.DefaultExpiration(30 * 24 * time.Hour), ""},
		{"default:1ms", ttl.DefaultExpiration(time.Millisecond), ""},
		{"seqnum:1", ttl.SequenceNumbers(1), ""},
		{"seqnum:3", ttl.SequenceNumbers(3), ""},
		{"counter:onesecond", ttl.Counter(ttl.OneSecond()), ""},
		{"counter:default:48h", ttl.Counter(ttl.DefaultExpiration(48 * time.Hour)), ""},
		{"grace:10m:onesecond", ttl.Grace(ttl.OneSecond(), 10*time.Minute), ""},
		{"grace:1d:default:48h", ttl.Grace(ttl.DefaultExpiration(48*time.Hour), 24*time.Hour), ""},
		{"grace:1h:counter:onesecond", ttl.Counter(ttl.Grace(ttl.OneSecond(), time.Hour)), ""},
		{"counter:grace:1h:onesecond", ttl.Counter(ttl.Grace(ttl.OneSecond(), time.Hour)), ""},

		{"onesecond:1s", nil, `strategy "onesecond:1s": want onesecond, default:DURATION, seqnum:VERSIONS, or counter:SPEC or grace:DURATION:SPEC around either of the first two`},
		{"grace:10m:seqnum:3", nil, `strategy "grace:10m:seqnum:3": a grace is for onesecond, default:DURATION and their counters`},
		{"grace:1m:grace:1m:onesecond", nil, `strategy "grace:1m:grace:1m:onesecond": a grace is for onesecond`},
		{"grace:1500ms:onesecond", nil, `strategy "grace:1500ms:onesecond": grace:1500ms: want a positive whole number of seconds, such as grace:10m:onesecond`},
		{"grace:-1m:onesecond", nil, `grace:-1m: want a positive whole number of seconds`},
		{"grace:0s:onesecond", nil, `grace:0s: want a positive whole number of seconds`},
		{"grace:10m", nil, `grace:10m: want a positive whole number of seconds`},
		{"grace:10m:", nil, `strategy "": want onesecond`},
		{"counter:seqnum:3", nil, `strategy "counter:seqnum:3": a counter counts in onesecond or default:DURATION`},
		{"counter:counter:onesecond", nil, `strategy "counter:counter:onesecond": a counter counts in onesecond or default:DURATION`},
		{"counter:", nil, `strategy "": want onesecond`},
		{"counter:default:0s", nil, "default:0s: want a positive duration"},
		{"OneSecond", nil, `strategy "OneSecond": want onesecond`},
		{"default", nil, `strategy "default": want onesecond`},
		{"seqnum", nil, `strategy "seqnum": want onesecond`},
		{"none", nil, `strategy "none": want onesecond`},
		{"", nil, `strategy "": want onesecond`},
		{"default:", nil, "default:: want a positive duration such as 48h, 90m or 30d"},
		{"default:0s", nil, "default:0s: want a positive duration"},
		{"default:0d", nil, "default:0d: want a positive duration"},
		{"default:-1h", nil, "default:-1h: want a positive duration"},
		{"default:-2d", nil, "default:-2d: want a positive duration"},
		{"default:2 days", nil, "default:2 days: want a positive duration"},
		{"default:1.5d", nil, "default:1.5d: want a positive duration"},
		{"seqnum:0", nil, "seqnum:0: want a positive number of versions"},
		{"seqnum:-3", nil, "seqnum:-3: want a positive number of versions"},
		{"seqnum:three", nil, "seqnum:three: want a positive number of versions"},
		{"seqnum:", nil, "seqnum:: want a positive number of versions"},
	} {
		got, err := Parse(tc.spec)
		check(t, "Parse", tc.spec, got, tc.want, err, tc.err)
		if tc.err != "" && got != nil {
			t.Errorf("Parse(%q) = %v with its error, want nil", tc.spec, got)
		}
	}
}

// TestParseDuration checks Go durations, whole days, and the days that do
// not fit a time.Duration.
func TestParseDuration(t *testing.T) {
	maxDays := int64(math.MaxInt64 / int64(24*time.Hour)) // 106751
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"48h", 48 * time.Hour, true},
		{"90m", 90 * time.Minute, true},
		{"1h30m", 90 * time.Minute, true},
		{"250ms", 250 * time.Millisecond, true},
		{"0s", 0, true},
		{"-1h", -time.Hour, true},
		{"1d", 24 * time.Hour, true},
		{"30d", 30 * 24 * time.Hour, true},
		{"0d", 0, true},
		{"-2d", -48 * time.Hour, true},
		{"90d", 90 * 24 * time.Hour, true},
		{strconv.FormatInt(maxDays, 10) + "d", time.Duration(maxDays) * 24 * time.Hour, true},

		{strconv.FormatInt(maxDays+1, 10) + "d", 0, false}, // past time.Duration's range
		{"99999999999999999999d", 0, false},
		{"d", 0, false},
		{"xd", 0, false},
		{"1.5d", 0, false},
		{"1d12h", 0, false},
		{"", 0, false},
		{"48", 0, false},
		{"soon", 0, false},
	} {
		got, err := ParseDuration(tc.in)
		switch {
		case tc.ok && err != nil:
			t.Errorf("ParseDuration(%q): %v", tc.in, err)
		case tc.ok && got != tc.want:
			t.Errorf("ParseDuration(%q) = %v, want %v", tc.in, got, tc.want)
		case !tc.ok && err == nil:
			t.Errorf("ParseDuration(%q) = %v, want an error", tc.in, got)
		}
	}
	// A bad count of days names the whole input, as given.
	if _, err := ParseDuration("xd"); err == nil || err.Error() != `bad duration "xd"` {
		t.Errorf(`ParseDuration("xd"): error %v, want bad duration "xd"`, err)
	}
}

// TestFamilies checks the repeated -family flag: each NAME=SPEC parsed
// into its strategy and kept as given, printed back sorted.
func TestFamilies(t *testing.T) {
	var f Families
	if got := f.String(); got != "" {
		t.Errorf("String of no families = %q, want empty", got)
	}
	if got := f.Names(); len(got) != 0 {
		t.Errorf("Names of no families = %q, want none", got)
	}
	for _, v := range []string{"sess=onesecond", "clicks=default:30d", "rev=seqnum:3", "a=default:90m"} {
		if err := f.Set(v); err != nil {
			t.Fatalf("Set(%q): %v", v, err)
		}
	}
	if got, want := f.String(), "a=default:90m,clicks=default:30d,rev=seqnum:3,sess=onesecond"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got, want := strings.Join(f.Names(), " "), "a clicks rev sess"; got != want {
		t.Errorf("Names() = %q, want %q", got, want)
	}
	want := map[string]ttl.Strategy{
		"sess":   ttl.OneSecond(),
		"clicks": ttl.DefaultExpiration(30 * 24 * time.Hour),
		"rev":    ttl.SequenceNumbers(3),
		"a":      ttl.DefaultExpiration(90 * time.Minute),
	}
	if len(f.Strategies) != len(want) {
		t.Errorf("Strategies = %v, want %v", f.Strategies, want)
	}
	for name, s := range want {
		if got := f.Strategies[name]; got == nil || got.String() != s.String() {
			t.Errorf("Strategies[%q] = %v, want %v", name, got, s)
		}
	}
	// The spec is kept as given, not as the strategy prints.
	if got := f.Specs["clicks"]; got != "default:30d" {
		t.Errorf(`Specs["clicks"] = %q, want "default:30d"`, got)
	}
}

// TestFamiliesRefused checks what Set refuses, and that a refused value
// changes nothing.
func TestFamiliesRefused(t *testing.T) {
	for _, tc := range []struct{ v, err string }{
		{"sess=onesecond", `family "sess" given twice`},
		{"sess=default:48h", `family "sess" given twice`},
		{"=onesecond", "want NAME=onesecond, NAME=default:DURATION or NAME=seqnum:VERSIONS"},
		{"onesecond", "want NAME=onesecond"},
		{"", "want NAME=onesecond"},
		{"clicks=", `family "clicks": strategy "": want onesecond`},
		{"clicks=default:0s", `family "clicks": default:0s: want a positive duration`},
		{"rev=seqnum:x", `family "rev": seqnum:x: want a positive number of versions`},
		{"clicks=default", `family "clicks": strategy "default"`},
	} {
		var f Families
		if err := f.Set("sess=onesecond"); err != nil {
			t.Fatal(err)
		}
		err := f.Set(tc.v)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("Set(%q): error %v, want one containing %q", tc.v, err, tc.err)
		}
		if got := f.String(); got != "sess=onesecond" {
			t.Errorf("after the refused Set(%q): %q, want sess=onesecond only", tc.v, got)
		}
	}
}

// TestFamiliesNil: a nil *Families prints empty rather than panicking.
func TestFamiliesNil(t *testing.T) {
	var f *Families
	if got := f.String(); got != "" {
		t.Errorf("(*Families)(nil).String() = %q, want empty", got)
	}
}
