package result

// Tip is one suggestion of the advice rules for a run, each naming the
// scenario whose figures triggered it; the run folder's advice.json holds a run's tips.
type Tip struct {
	Rule     string `json:"rule"`     // "quantisation", "batching", "memory-growth"
	Scenario string `json:"scenario"` // benchmark/scenario
	Text     string `json:"text"`
}
