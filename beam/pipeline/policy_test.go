package pipeline

import (
	"encoding/json"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
)

// TestPolicyRoundTrip checks that every kind of GC policy survives the
// trip to the workers: encoded, through JSON, decoded.
func TestPolicyRoundTrip(t *testing.T) {
	day := 24 * time.Hour
	for _, p := range []bigtable.GCPolicy{
		nil,
		bigtable.NoGcPolicy(),
		bigtable.MaxAgePolicy(time.Second),
		bigtable.MaxVersionsPolicy(3),
		bigtable.UnionPolicy(bigtable.MaxAgePolicy(7*day), bigtable.MaxVersionsPolicy(2)),
		bigtable.IntersectionPolicy(bigtable.MaxAgePolicy(30*day),
			bigtable.UnionPolicy(bigtable.MaxVersionsPolicy(1), bigtable.MaxAgePolicy(time.Hour))),
	} {
		r, err := encodePolicy(p)
		if err != nil {
			t.Fatalf("%v: %v", p, err)
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var back gcRule
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		got, err := back.policy()
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		want := p
		if want == nil {
			want = bigtable.NoGcPolicy()
		}
		if got.String() != want.String() || bigtable.GetPolicyType(got) != bigtable.GetPolicyType(want) {
			t.Errorf("%s decodes to %q (%T), want %q (%T)", b, got, got, want, want)
		}
	}
	if _, err := (gcRule{Kind: "sometimes"}).policy(); err == nil {
		t.Error("a rule of an unknown kind decodes")
	}
}
