package pipeline

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestMoveSpecJSON: the move a rewrite carries to its workers gives its
// skew as a Go duration string, as every duration in the module's JSON,
// and the workers read back the same ttl.Move.
func TestMoveSpecJSON(t *testing.T) {
	start := time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)
	ms := moveSpec{To: "onesecond", From: "none", Old: "for:30m", Start: start, Skew: (90 * time.Second).String()}
	b, err := json.Marshal(ms)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"skew":"1m30s"`) {
		t.Errorf("moveSpec as JSON: %s, want \"skew\":\"1m30s\"", b)
	}
	var back moveSpec
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	m, err := back.move()
	if err != nil {
		t.Fatal(err)
	}
	if m.Skew != 90*time.Second || !m.Start.Equal(start) {
		t.Errorf("the move read back: %+v", m)
	}
	back.Skew = "90"
	if _, err := back.move(); err == nil || !strings.Contains(err.Error(), "skew") {
		t.Errorf("a skew without a unit: %v, want an error naming the skew", err)
	}
}
