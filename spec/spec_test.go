package spec

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cellttl/ttl"
)

// TestParseFrom checks -from: a strategy, or none for real timestamps.
func TestParseFrom(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want ttl.Strategy
		err  string
	}{
		{"none", nil, ""},
		{"onesecond", ttl.OneSecond(), ""},
		{"default:30d", ttl.DefaultExpiration(30 * 24 * time.Hour), ""},
		{"seqnum:3", ttl.SequenceNumbers(3), ""},
		{"", nil, `strategy "": want onesecond`},
		{"None", nil, `strategy "None"`},
		{"default:0s", nil, "default:0s: want a positive duration"},
	} {
		got, err := ParseFrom(tc.spec)
		check(t, "ParseFrom", tc.spec, got, tc.want, err, tc.err)
	}
}

// TestParseOld checks -old's rules and the messages the cellttl command
// prints for the bad ones.
func TestParseOld(t *testing.T) {
	until := time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		spec string
		want ttl.Lifetime
		err  string
	}{
		{"default", ttl.Default, ""},
		{"forever", ttl.Forever, ""},
		{"for:30m", ttl.For(30 * time.Minute), ""},
		{"for:7d", ttl.For(7 * 24 * time.Hour), ""},
		{"until:2030-04-30T09:00:00Z", ttl.Until(until), ""},
		{"for:0s", ttl.Default, "for:0s: want a positive duration such as 30m or 7d"},
		{"for:soon", ttl.Default, "for:soon: want a positive duration"},
		{"until:tomorrow", ttl.Default, "until:tomorrow: want a time such as 2030-04-30T09:00:00Z"},
		{"later", ttl.Default, "want default, for:DURATION, until:TIME or forever"},
		{"", ttl.Default, "want default, for:DURATION, until:TIME or forever"},
	} {
		got, err := ParseOld(tc.spec)
		check(t, "ParseOld", tc.spec, got, tc.want, err, tc.err)
	}
}

// check reports a parse of spec by fn that did not return want (as
// printed), or did not fail with an error containing wantErr.
func check(t *testing.T, fn, spec string, got, want any, err error, wantErr string) {
	t.Helper()
	switch {
	case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
		t.Errorf("%s(%q): error %v, want one containing %q", fn, spec, err, wantErr)
	case wantErr == "" && err != nil:
		t.Errorf("%s(%q): %v", fn, spec, err)
	case wantErr == "" && fmt.Sprint(got) != fmt.Sprint(want):
		t.Errorf("%s(%q) = %v, want %v", fn, spec, got, want)
	}
}

// TestParseOldTakesNoArgument: default and forever take no argument.
func TestParseOldTakesNoArgument(t *testing.T) {
	for _, bad := range []string{"default:48h", "forever:x", "default:"} {
		if _, err := ParseOld(bad); err == nil {
			t.Errorf("ParseOld(%q) accepted", bad)
		}
	}
}
