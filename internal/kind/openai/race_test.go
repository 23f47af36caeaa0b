//go:build race

package openai

// raceEnabled: the race detector allocates on its own account, so allocation counts are not the
// client's.
const raceEnabled = true
