package ttl

import (
	"testing"

	"github.com/cellttl/ttl/internal/rules"
)

// TestConstsWrittenOut checks the exported constants whose values are
// written out for the documentation against the expressions they stand
// for, so that the two cannot drift apart.
func TestConstsWrittenOut(t *testing.T) {
	if WriteTimePrefix != reservedFrom+"wt:" {
		t.Errorf("WriteTimePrefix = %q, want reservedFrom + \"wt:\" = %q", WriteTimePrefix, reservedFrom+"wt:")
	}
	if MaxTimestamp != rules.MaxTimestamp {
		t.Errorf("MaxTimestamp = %d, want rules.MaxTimestamp = %d", MaxTimestamp, rules.MaxTimestamp)
	}
}
