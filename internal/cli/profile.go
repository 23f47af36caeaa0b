package cli

import "github.com/spf13/cobra"

// profileFlag registers --profile on run: N calls per scenario under the subject's profiler.
func profileFlag(cmd *cobra.Command, n *int) {
	cmd.Flags().IntVar(n, "profile", 0, "after each scenario's measured iterations, run this many more calls under the subject's profiler (pprof for Go functions, cProfile for Python functions, torch.profiler for torch adapters; on a GPU machine with nsys or ncu on PATH, scripts that run the scenario under them); files in the run folder's profiles/, listed in run.json")
	cmd.Flags().Lookup("profile").NoOptDefVal = "20"
}
