//go:build !race

package ttl_test

// raceDetector is true when the tests run under the race detector, which
// makes each request several times slower.
const raceDetector = false
