// Package suite reads benchmark definitions: YAML files under benches/ directories, decoded
// strictly (an unknown key or a wrong type is an error naming file:line:col, with a did-you-mean
// hint), expanded into scenarios (the cartesian product of the matrix, minus exclude, plus include),
// filtered, and checked for their requirements (a missing Python module or command skips a scenario
// with the reason, never crashes the run).
package suite
