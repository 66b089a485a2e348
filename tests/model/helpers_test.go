package model_test

import (
	"math/rand/v2"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/testkit"
)

// Short names for the testkit helpers these tests share, as they were
// spelled when the tests stood in package ttl, and the few helpers that
// need a type of these tests' own.

// base is the fake clocks' starting instant.
var base = testkit.Base

// fakeClock is testkit's clock, which moves only when told.
type fakeClock = testkit.Clock

var (
	newClock = testkit.NewClock
)

// maxSeq is the largest sequence number.
const maxSeq = int64(ttl.MaxTimestamp / 1000)

// pick returns one of xs, chosen with r.
func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }
