//go:build race

package gofunc

// raceEnabled: under the race detector, CPU samples in its runtime have no Go stack.
const raceEnabled = true
