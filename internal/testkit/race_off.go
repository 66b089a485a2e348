//go:build !race

package testkit

// Race is true when the tests run under the race detector, which makes
// each request several times slower.
const Race = false
