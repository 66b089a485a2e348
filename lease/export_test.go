package lease

import "cloud.google.com/go/bigtable"

// Reopen returns c's twin reaching Bigtable through data: its view of the
// row and its lease, for a test of failures after a successful start.
func Reopen(c *Checkpoint, data bigtable.TableAPI) *Checkpoint {
	c.mu.Lock()
	defer c.mu.Unlock()
	return &Checkpoint{data: data, table: c.table, key: c.key, holder: c.holder, now: c.now,
		gen: c.gen, seen: c.seen, token: c.token, d: c.d, renewed: c.renewed, deadline: c.deadline}
}
