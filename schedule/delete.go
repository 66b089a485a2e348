package schedule

import (
	"context"
	"fmt"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/internal/text"
)

// Delete deletes the entries keys from tbl, the schedule table named
// table, in one request (none for no keys): what a sweep that deletes
// does with the entries it served, once their rows' expired cells are
// deleted. It returns nil only when every entry was deleted; an error
// names table, and the first entry that failed. Deleting an entry again
// is harmless, so a caller that failed deletes the same keys again.
func Delete(ctx context.Context, tbl bigtable.TableAPI, table string, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	muts := make([]*bigtable.Mutation, len(keys))
	for i := range muts {
		muts[i] = bigtable.NewMutation()
		muts[i].DeleteRow()
	}
	errs, err := tbl.ApplyBulk(ctx, keys, muts)
	if err != nil {
		return fmt.Errorf("deleting %s served from schedule table %q: %w", text.Plural(len(keys), "entry", "entries"), table, err)
	}
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("deleting entry %q from schedule table %q: %w", keys[i], table, err)
		}
	}
	return nil
}
