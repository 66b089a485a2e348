package sweep

import (
	"context"
	"time"
)

// SetSleep makes Every wait with sleep: a test's fake clock.
func SetSleep(s *Sweeper, sleep func(ctx context.Context, d time.Duration) error) { s.sleep = sleep }

// Sleep is the wait Every uses by default.
var Sleep = sleep
