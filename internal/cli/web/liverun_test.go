package web

import (
	"github.com/inferbench/inferbench/internal/engine"
	"github.com/inferbench/inferbench/run"
)

// A LiveRun is a run.Observer with three abilities (package web imports neither run nor engine).
var (
	_ run.Starter           = (*LiveRun)(nil)
	_ engine.MeasureStarter = (*LiveRun)(nil)
	_ run.Finisher          = (*LiveRun)(nil)
)
