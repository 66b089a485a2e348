//go:build race

package sweep_test

// raceDetector is true when the tests run under the race detector.
const raceDetector = true
