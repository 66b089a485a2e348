package main

import (
	"errors"
	"flag"
	"testing"
)

// TestConfigNotYet checks that a round whose end, -now less -margin, is
// not after -from is "not yet" (exit 4), while an -until not after -from
// is a bad command line.
func TestConfigNotYet(t *testing.T) {
	for name, value := range map[string]string{"project": "p", "instance": "i", "table": "t", "output": "/tmp/x",
		"family": "sess=onesecond", "from": "2030-04-30T09:00:00Z", "now": "2030-04-30T09:00:05Z"} {
		if err := flag.Set(name, value); err != nil {
			t.Fatal(name, err)
		}
	}
	if _, err := config(); !errors.Is(err, errNotYet) {
		t.Errorf("a round ending before it starts: %v, want errNotYet", err)
	}
	if err := flag.Set("until", "2030-04-30T08:00:00Z"); err != nil {
		t.Fatal(err)
	}
	_, err := config()
	if err == nil || errors.Is(err, errNotYet) || err.Error() != "-until 2030-04-30T08:00:00.000Z is not after -from 2030-04-30T09:00:00.000Z: a round ends after it starts" {
		t.Errorf("-until before -from: %v, want a bad command line", err)
	}
	if err := flag.Set("until", "2030-04-30T09:30:00Z"); err != nil {
		t.Fatal(err)
	}
	if _, err := config(); err != nil {
		t.Errorf("a round of half an hour: %v", err)
	}
}
