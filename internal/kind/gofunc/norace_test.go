//go:build !race

package gofunc

const raceEnabled = false
