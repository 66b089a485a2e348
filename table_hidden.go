package ttl

import (
	"strings"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/internal/rules"
)

// Reasons Table.Hidden gives for a cell that reads through the table hide.
const (
	HiddenExpired    = "expired"                // its expiry has passed
	HiddenMargin     = "within the read margin" // it expires within WithReadMargin's margin
	HiddenSuperseded = "superseded"             // newer versions fill SequenceNumbers' n
	HiddenUndeclared = "family not declared"    // a family OtherFamilies does not name
	HiddenCompanion  = "write-time companion"   // a RecordWriteTime companion column
)

// Hidden says why a read through the table at now hides item, a stored
// cell with newer cells above it in its column, as one of the Hidden
// constants; "" when the table's rules keep it live. It reads nothing
// and is safe for concurrent use.
func (t *Table) Hidden(item bigtable.ReadItem, newer int, now time.Time) string {
	if t == nil {
		return ""
	}
	family, column := rules.SplitColumn(item.Column)
	s, managed := t.managed[family]
	switch {
	case !managed && t.others != nil && !t.others[family]:
		return HiddenUndeclared
	case !managed:
		return ""
	case bool(t.companions) && strings.HasPrefix(column, WriteTimePrefix):
		return HiddenCompanion
	}
	if n, ok := s.Versions(); ok {
		if newer >= n {
			return HiddenSuperseded
		}
		return ""
	}
	exp, ok := s.ExpiresAt(item.Timestamp)
	switch {
	case !ok:
		return ""
	case !exp.After(now):
		return HiddenExpired
	case !exp.After(now.Add(t.margin)):
		return HiddenMargin
	}
	return ""
}
