package moves_test

import (
	"time"

	"github.com/cellttl/ttl/internal/testkit"
)

// start is the instant the tests' moves start at: a day after the fake
// clocks' starting instant.
var start = testkit.Base.Add(24 * time.Hour)
