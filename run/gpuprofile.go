package run

import (
	"strconv"

	"github.com/inferbench/inferbench/internal/engine"
	"github.com/inferbench/inferbench/internal/stage/nsight"
)

// newGPUProfiler returns the writer of the Nsight scripts of a run (package nsight), or nil when
// the machine has no GPU or neither tool is on the run's PATH.
func newGPUProfiler(p *pipeline, gpus int) engine.ProfileCommands {
	if gpus == 0 {
		return nil
	}
	path, _ := p.env.Lookup("PATH")
	sel := p.o.Selection
	var flags []string // the selection a re-run of one scenario repeats
	for _, s := range sel.Set {
		flags = append(flags, "--set", s)
	}
	if sel.EnableMock {
		flags = append(flags, "--enable-mock")
	}
	if sel.GenerateTokens > 0 {
		flags = append(flags, "--num-tokens-to-generate", strconv.Itoa(sel.GenerateTokens))
	}
	if sel.ModelID != "" {
		flags = append(flags, "--model-id", sel.ModelID)
	}
	if s := nsight.New(path, p.env.WorkDir(), flags, p.o.Profile, p.red); s != nil {
		return s.Write
	}
	return nil
}
