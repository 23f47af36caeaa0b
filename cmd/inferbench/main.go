// Command inferbench benchmarks ML inference. See 'inferbench --help' and docs/.
package main

import (
	"os"

	"github.com/inferbench/inferbench"
)

func main() {
	os.Exit(inferbench.Run(os.Args[1:], inferbench.Options{}))
}
