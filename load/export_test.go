package load

// Derivations returns how many times StreamMetrics has run in this process, for the tests of
// package load_test (derived_test.go).
func Derivations() int64 { return derivations.Load() }
