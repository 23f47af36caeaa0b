package suite

import (
	"strings"
	"testing"
)

// TestNumbersChecked holds every number of a definition to what it can mean: NaN, infinities and
// negative durations are errors naming the file, line and key, never a silent pass.
func TestNumbersChecked(t *testing.T) {
	const head = "name: x\nsubject: {kind: exec, command: [\"true\"]}\n"
	for _, tc := range []struct {
		name, src, want string
	}{
		// With 10 of 10 iterations failed, a NaN rate passed the scenario (exit 0).
		{"max_error_rate nan", head + "load:\n  max_error_rate: .nan\n", "x.yaml:4:19: .nan is not a finite number"},
		// Infinity in any spelling.
		{"max_error_rate inf", head + "load: {max_error_rate: .inf}\n", "x.yaml:3:24: .inf is not a finite number"},
		// A literal too large for a float is not read as an infinity.
		{"overflow", head + "load: {rate: 1e400}\n", "x.yaml:3:14: rate: want a number, got a string"},
		// A parameter cannot be NaN either.
		{"param nan", head + "params: {scale: -.Inf}\n", "x.yaml:3:17: -.Inf is not a finite number"},
		// A matrix value.
		{"matrix nan", head + "matrix: {scale: [1, .NaN]}\n", "x.yaml:3:21: .NaN is not a finite number"},
		// A value from the environment.
		{"env", head + "load: {max_error_rate: \"${RATE}\"}\n", "x.yaml:3:24: max_error_rate: NaN is not a finite number"},
		// Negative durations were accepted: timeout, min_time, max_time.
		{"timeout", head + "load:\n  timeout: -1s\n", "x.yaml:4:12: timeout: -1s: a duration cannot be negative"},
		{"min_time", head + "load: {min_time: -5s}\n", "x.yaml:3:18: min_time: -5s: a duration cannot be negative"},
		{"max_time", head + "load: {max_time: -2m}\n", "x.yaml:3:18: max_time: -2m0s: a duration cannot be negative"},
		// A launched server's timeouts.
		{"server ready_timeout", head + "server: {command: [srv], ready: \"http://127.0.0.1:1/\", ready_timeout: -1s}\n", "ready_timeout: -1s: a duration cannot be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("benches/x.yaml", []byte(tc.src), func(string) (string, bool) { return "NaN", true })
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse: %v\nwant an error with %q", err, tc.want)
			}
		})
	}
}

// TestParseValueFinite: --set x=NaN (or Inf, 1e400) is text, never a non-finite number.
func TestParseValueFinite(t *testing.T) {
	for _, s := range []string{"NaN", "Inf", "-inf", "1e400"} {
		if v, ok := ParseValue(s).(string); !ok || v != s {
			t.Errorf("ParseValue(%q) = %#v, want the text", s, ParseValue(s))
		}
	}
	if v := ParseValue("2.5"); v != 2.5 {
		t.Errorf("ParseValue(2.5) = %#v", v)
	}
}
