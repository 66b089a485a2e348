package faults_test

import (
	"math/rand/v2"

	"github.com/cellttl/ttl/testkit"
)

// Short names for the testkit helpers these tests share, as they were
// spelled when the tests stood in package ttl, and the few helpers that
// need a type of these tests' own.

// base is the fake clocks' starting instant.
var base = testkit.Base

var (
	newClock = testkit.NewClock
	newTable = testkit.NewTable
	set      = testkit.Set
)

// pick returns one of xs, chosen with r.
func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }
