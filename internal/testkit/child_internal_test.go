package testkit

import (
	"strings"
	"testing"
)

// TestStartChildThatDoesNotServe: a child whose test serves no emulator
// is an error, not a hang.
func TestStartChildThatDoesNotServe(t *testing.T) {
	if _, _, err := startChild("TestNoSuchTest"); err == nil || !strings.Contains(err.Error(), "did not start") {
		t.Errorf("err = %v", err)
	}
}
