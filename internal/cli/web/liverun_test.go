package web

import (
	"context"
	"reflect"
	"testing"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/run"
)

// A LiveRun is a run.Observer with four abilities (package web does not import run).
var (
	_ run.RunStarter       = (*LiveRun)(nil)
	_ run.MeasureStarter   = (*LiveRun)(nil)
	_ run.ScenarioFinisher = (*LiveRun)(nil)
	_ run.RunFinisher      = (*LiveRun)(nil)
)

// TestHubTakesPartInNoEvent: the hub's methods are not named like the run's events, so that
// handing a hub to a run as an observer is not silently a partial one (its ScenarioDone took a
// result.Scenario, as run.ScenarioFinisher does).
func TestHubTakesPartInNoEvent(t *testing.T) {
	var h any = NewHub()
	for name, ok := range map[string]bool{
		"run.RunStarter":        is[run.RunStarter](h),
		"run.ScenarioStarter":   is[run.ScenarioStarter](h),
		"run.MeasureStarter":    is[run.MeasureStarter](h),
		"run.CallCounter":       is[run.CallCounter](h),
		"the call hook":         reflect.ValueOf(h).MethodByName("CallHook").IsValid(),
		"run.ScenarioFinisher":  is[run.ScenarioFinisher](h),
		"run.ScenariosFinisher": is[run.ScenariosFinisher](h),
		"run.RunJudger":         is[run.RunJudger](h),
		"run.RunFinisher":       is[run.RunFinisher](h),
	} {
		if ok {
			t.Errorf("Hub implements %s", name)
		}
	}
}

func is[T any](v any) bool { _, ok := v.(T); return ok }

// TestLiveRunObservesScenarios: a finished scenario reaches the live view when the run hands it
// over, with no run.json in the run folder to read.
func TestLiveRunObservesScenarios(t *testing.T) {
	l := &LiveRun{Addr: "127.0.0.1:0"}
	ctx := context.Background()
	if err := l.RunStarted(ctx, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	l.ScenarioFinished(&result.Scenario{Benchmark: "b", Scenario: "s", Status: result.StatusOK})
	if st := l.srv.Hub().State(); len(st.Scenarios) != 1 || !st.Running {
		t.Errorf("live state %+v: want the scenario, running", st)
	}
	if err := l.RunFinished(ctx, &result.Run{ID: "r", Scenarios: []result.Scenario{{Benchmark: "b", Scenario: "s", Status: result.StatusOK}}}); err != nil {
		t.Fatal(err)
	}
	if st := l.srv.Hub().State(); st.Running || len(st.Scenarios) != 1 {
		t.Errorf("live state %+v after the run: want it over, with its scenario", st)
	}
}
