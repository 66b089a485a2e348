package routing_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cellttl/ttl/internal/routing"
)

func TestRefused(t *testing.T) {
	refusal := status.Error(codes.FailedPrecondition, "Error in field 'app_profile_id' : Single-row transactions are not allowed by this app profile.")
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errors.New("Single-row transactions are not allowed by this app profile"), false}, // no status
		{refusal, true},
		{fmt.Errorf("wrapped: %w", refusal), true},
		{status.Error(codes.FailedPrecondition, "Table is being restored"), false},
		{status.Error(codes.PermissionDenied, "Single-row transactions are not allowed by this app profile"), false},
	} {
		if got := routing.Refused(tt.err); got != tt.want {
			t.Errorf("Refused(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

func TestExplain(t *testing.T) {
	for _, tt := range []struct {
		profile, option, want, not string
	}{
		{"replicated", "ttl.WithAppProfile", `which app profile "replicated" refuses`, "name it with"},
		{"", "ttl.WithAppProfile", "name it with ttl.WithAppProfile to see it here", `"`},
		{"", "", "which the client's app profile (bigtable.ClientConfig.AppProfile) refuses", "name it with"},
	} {
		got := routing.Explain("Touch", tt.profile, tt.option)
		for _, want := range []string{"Touch needs a single-row transaction", tt.want, "single-cluster routing", "Set and Replace", "Add"} {
			if !strings.Contains(got, want) {
				t.Errorf("Explain(%q, %q) = %q: no %q", tt.profile, tt.option, got, want)
			}
		}
		if strings.Contains(got, tt.not) {
			t.Errorf("Explain(%q, %q) = %q: has %q", tt.profile, tt.option, got, tt.not)
		}
	}
}
