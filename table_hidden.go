package ttl

import (
	"strings"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/internal/rules"
)

// Why reads hide a cell, as Table.Hidden says it.
const (
	hiddenExpired    = "expired"                // its expiry has passed
	hiddenMargin     = "within the read margin" // it expires within WithReadMargin's margin
	hiddenSuperseded = "superseded"             // newer versions fill SequenceNumbers' n
	hiddenUndeclared = "family not declared"    // a family OtherFamilies does not name
	hiddenCompanion  = "write-time companion"   // a RecordWriteTime companion column
)

// Hidden says why a read through the table at now hides item, a stored
// cell with newer cells above it in its column: "expired", "within the
// read margin" (WithReadMargin), "superseded" (by newer versions, under
// SequenceNumbers), "family not declared" (OtherFamilies) or "write-time
// companion" (RecordWriteTime); "" when the table's rules keep it live.
// It reads nothing and is safe for concurrent use.
func (t *Table) Hidden(item bigtable.ReadItem, newer int, now time.Time) string {
	if t == nil {
		return ""
	}
	family, column := rules.SplitColumn(item.Column)
	s, managed := t.managed[family]
	switch {
	case !managed && t.others != nil && !t.others[family]:
		return hiddenUndeclared
	case !managed:
		return ""
	case bool(t.companions) && strings.HasPrefix(column, WriteTimePrefix):
		return hiddenCompanion
	}
	if n, ok := s.Versions(); ok {
		if newer >= n {
			return hiddenSuperseded
		}
		return ""
	}
	exp, ok := s.ExpiresAt(item.Timestamp)
	switch {
	case !ok:
		return ""
	case !exp.After(now):
		return hiddenExpired
	case !exp.After(now.Add(t.margin)):
		return hiddenMargin
	}
	return ""
}
