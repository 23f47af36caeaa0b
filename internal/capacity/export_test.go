package capacity

// EstimateOf exposes estimate to the tests of package capacity_test.
var EstimateOf = estimate

// Finish exposes Result.finish: the estimate and curve of steps, with the bound lo and the
// bracket's upper end hi.
func Finish(o []Objective, steps []Step, lo, hi float64) Result {
	r := Result{Objectives: o, Steps: steps}
	r.finish(lo, hi)
	return r
}
