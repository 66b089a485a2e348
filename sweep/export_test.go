package sweep

import (
	"context"
	"time"
)

// SetSleep makes Every wait with sleep: a test's fake clock.
func SetSleep(s *Sweeper, sleep func(ctx context.Context, d time.Duration) error) { s.sleep = sleep }

// Sleep is the wait Every uses by default.
var Sleep = sleep

// SetRowReads sets how each salt of a scheduled round reads the rows it
// names: ahead requests in flight at once (1 reads them one after the
// other), of perRead rows each; 0 keeps the default.
func SetRowReads(s *Sweeper, ahead, perRead int) { s.reads = rowReads{ahead, perRead} }
