package rules_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/rules"
)

// These tests use package ttl's strategies, whose Rule methods rules.Of
// reads.

// TestCheckFamilies checks the map of managed families the tools take: at
// least one, each with a name Bigtable accepts and a valid strategy, its
// errors wrapping ErrInvalidStrategy and naming the family; the map
// returned is a copy.
func TestCheckFamilies(t *testing.T) {
	for _, tt := range []struct {
		name     string
		families map[string]ttl.Strategy
		want     error
		named    string
	}{
		{"no family", nil, ttl.ErrInvalidStrategy, ""},
		{"an empty map", map[string]ttl.Strategy{}, ttl.ErrInvalidStrategy, ""},
		{"a bad name", map[string]ttl.Strategy{"f": ttl.OneSecond(), "a b": ttl.OneSecond()}, ttl.ErrInvalidStrategy, `"a b"`},
		{"a nil strategy", map[string]ttl.Strategy{"f": nil}, ttl.ErrInvalidStrategy, `"f"`},
		{"an invalid strategy", map[string]ttl.Strategy{"f": ttl.SequenceNumbers(0)}, ttl.ErrInvalidStrategy, `"f"`},
		{"an invalid default", map[string]ttl.Strategy{"g": ttl.DefaultExpiration(-time.Hour)}, ttl.ErrInvalidStrategy, `"g"`},
		{"an invalid move", map[string]ttl.Strategy{"m": ttl.Move{To: ttl.OneSecond()}}, ttl.ErrInvalidStrategy, `"m"`},
	} {
		got, err := rules.CheckFamilies(tt.families)
		if !errors.Is(err, tt.want) || got != nil {
			t.Errorf("%s: %v, %v; want %v", tt.name, got, err, tt.want)
			continue
		}
		if !strings.Contains(err.Error(), tt.named) {
			t.Errorf("%s: %v does not name %s", tt.name, err, tt.named)
		}
	}

	families := map[string]ttl.Strategy{
		"sess": ttl.OneSecond(),
		"hits": ttl.DefaultExpiration(time.Hour),
		"rev":  ttl.SequenceNumbers(2),
		"mv":   ttl.Move{To: ttl.OneSecond(), Start: time.Date(2030, 5, 1, 0, 0, 0, 0, time.UTC), Old: ttl.For(time.Hour)},
	}
	got, err := rules.CheckFamilies(families)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(families) {
		t.Fatalf("CheckFamilies = %v, want %v", got, families)
	}
	for name, s := range families {
		if got[name] != s {
			t.Errorf("%s: %v, want %v", name, got[name], s)
		}
	}
	families["sess"] = ttl.SequenceNumbers(1)
	delete(families, "rev")
	if got["sess"] != ttl.OneSecond() || got["rev"] == nil {
		t.Error("the map returned changed with the caller's")
	}
}

// TestOf checks the rule behind each strategy as package ttl gives it.
func TestOf(t *testing.T) {
	start := time.Date(2030, 5, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		s    any
		want rules.Strategy
	}{
		{nil, rules.Strategy{Kind: rules.None}},
		{ttl.OneSecond(), rules.Strategy{Kind: rules.ByTime}},
		{ttl.DefaultExpiration(time.Hour), rules.Strategy{Kind: rules.ByTime, Time: rules.Time{Offset: time.Hour}}},
		{ttl.SequenceNumbers(3), rules.Strategy{Kind: rules.ByVersions, Versions: 3}},
	} {
		got, err := rules.Of(tt.s)
		if err != nil || got != tt.want {
			t.Errorf("Of(%v) = %+v, %v; want %+v", tt.s, got, err, tt.want)
		}
	}
	got, err := rules.Of(ttl.Move{From: ttl.SequenceNumbers(2), To: ttl.OneSecond(), Start: start, Old: ttl.Until(start.Add(time.Hour)), Skew: time.Minute})
	if err != nil || got.Kind != rules.Moving || got.Move == nil {
		t.Fatalf("Of(a move) = %+v, %v", got, err)
	}
	want := rules.Move{From: rules.Strategy{Kind: rules.ByVersions, Versions: 2}, To: rules.Strategy{Kind: rules.ByTime}, Start: start,
		Old: rules.Old{Kind: rules.OldUntil, Until: start.Add(time.Hour)}, Skew: time.Minute}
	m := *got.Move
	sameTimes := m.Start.Equal(want.Start) && m.Old.Until.Equal(want.Old.Until)
	m.Start, m.Old.Until, want.Start, want.Old.Until = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	if !sameTimes || m != want {
		t.Errorf("Of(a move).Move = %+v, want %+v", *got.Move, want)
	}
	var nilMove *ttl.Move // a Ruler through its pointer, nil
	for _, bad := range []any{"OneSecond", 3, ttl.SequenceNumbers(-1), nilMove} {
		if _, err := rules.Of(bad); !errors.Is(err, ttl.ErrInvalidStrategy) {
			t.Errorf("Of(%v) = %v, want ErrInvalidStrategy", bad, err)
		}
	}
}

// TestSentinels checks that package ttl's sentinels are the ground floor's,
// with ttl's messages: an error the floors below ttl return is the one a
// caller tests against ttl's name.
func TestSentinels(t *testing.T) {
	for _, tt := range []struct {
		rules, ttl error
		msg        string
	}{
		{rules.ErrInvalidStrategy, ttl.ErrInvalidStrategy, "ttl: invalid strategy"},
		{rules.ErrInvalidOption, ttl.ErrInvalidOption, "ttl: invalid option"},
		{rules.ErrUnknownFamily, ttl.ErrUnknownFamily, "ttl: unknown column family"},
		{rules.ErrNilArgument, ttl.ErrNilArgument, "ttl: nil argument"},
	} {
		if tt.rules != tt.ttl || tt.rules.Error() != tt.msg {
			t.Errorf("%v is not ttl's %v, %q", tt.rules, tt.ttl, tt.msg)
		}
	}
}
