package require

import "testing"

func TestRequired(t *testing.T) {
	for _, c := range []struct {
		env, what string
		want      bool
	}{
		{"", Frameworks, false},                         // unset: everything may skip
		{"frameworks", Frameworks, true},                // named
		{"frameworks", LlamaServer, false},              // another one named
		{"frameworks, llama-server", LlamaServer, true}, // a list, spaces allowed
		{"all", LlamaServer, true},                      // everything
		{"framework", Frameworks, false},                // no prefix matching
		{"frameworks,trackers", Trackers, true},         // the experiment trackers
		{"frameworks", Trackers, false},                 // frameworks do not imply trackers
	} {
		t.Setenv(Env, c.env)
		if got := Required(c.what); got != c.want {
			t.Errorf("%s=%q: Required(%q) = %v, want %v", Env, c.env, c.what, got, c.want)
		}
	}
}

// recorder is a testing.TB that records whether Fatalf or Skipf ended the test.
type recorder struct {
	testing.TB
	fatal, skip bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Fatalf(string, ...any) { r.fatal = true }
func (r *recorder) Skipf(string, ...any)  { r.skip = true }

func TestSkipf(t *testing.T) {
	t.Setenv(Env, "llama-server")
	r := &recorder{TB: t}
	Skipf(r, LlamaServer, "no %s", "llama-server")
	if !r.fatal || r.skip {
		t.Errorf("required: fatal %v skip %v, want a failure", r.fatal, r.skip)
	}
	r = &recorder{TB: t}
	Skipf(r, Frameworks, "no torch")
	if r.fatal || !r.skip {
		t.Errorf("not required: fatal %v skip %v, want a skip", r.fatal, r.skip)
	}
}
