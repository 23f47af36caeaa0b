package run

import (
	"fmt"
	"io"
	"strings"

	"github.com/inferbench/inferbench/internal/base/exit"
	"github.com/inferbench/inferbench/suite"
)

// Validate parses every definition sel finds strictly and writes how many benchmarks and
// scenarios they make to w; broken definitions are ErrUsage, listing every problem with
// file:line:col.
func Validate(sel Selection, env Env, w io.Writer) error {
	benches, err := Discover(sel, env)
	if err != nil {
		return err
	}
	if len(benches) == 0 {
		return exit.Usagef("no benchmark found: %s", suite.SearchDescription(roots(sel, env)))
	}
	n := 0
	for _, b := range benches {
		n += len(b.Expand(nil))
	}
	writeFound(w, benches)
	_, err = fmt.Fprintf(w, "ok: %d benchmarks, %d scenarios\n", len(benches), n)
	return err
}

// writeFound writes what discovery found: a line per file with its benchmarks' names.
func writeFound(w io.Writer, benches []*suite.Benchmark) {
	var files []string
	names := map[string][]string{}
	for _, b := range benches {
		if _, ok := names[b.File]; !ok {
			files = append(files, b.File)
		}
		names[b.File] = append(names[b.File], b.Name)
	}
	for _, f := range files {
		fmt.Fprintf(w, "%s: %s\n", f, strings.Join(names[f], ", "))
	}
}
