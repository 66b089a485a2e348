package testkit_test

import (
	"errors"
	"testing"

	"github.com/cellttl/ttl/internal/testkit"
)

func TestRefusingMeters(t *testing.T) {
	boom := errors.New("boom")
	m := testkit.RefusingMeters{Refuse: "a", Err: boom}.Meter("m")
	if _, err := m.Int64Counter("a"); !errors.Is(err, boom) {
		t.Errorf("counter a: %v, want boom", err)
	}
	if _, err := m.Float64Histogram("a"); !errors.Is(err, boom) {
		t.Errorf("histogram a: %v, want boom", err)
	}
	if c, err := m.Int64Counter("b"); err != nil || c == nil {
		t.Errorf("counter b: %v, %v", c, err)
	}
	if h, err := m.Float64Histogram("b"); err != nil || h == nil {
		t.Errorf("histogram b: %v, %v", h, err)
	}
	all := testkit.RefusingMeters{Err: boom}.Meter("m")
	if _, err := all.Int64Counter("b"); !errors.Is(err, boom) {
		t.Errorf("with no name, counter b: %v, want boom", err)
	}
}
