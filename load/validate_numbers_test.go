package load

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestValidateNumbers: a configuration built in Go (quick, a library caller) is held to what a
// definition is: a NaN error rate passed every range check, negative durations were kept.
func TestValidateNumbers(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Config
		want string
	}{
		{"nan error rate", Config{MaxErrorRate: math.NaN()}, "max_error_rate NaN is outside [0, 1]"},
		{"negative timeout", Config{Timeout: -time.Second}, "timeout -1s is negative"},
		{"negative min_time", Config{MinTime: -time.Second}, "min_time -1s is negative"},
		{"negative max_time", Config{MaxTime: -time.Second}, "max_time -1s is negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate: %v, want %q", err, tc.want)
			}
		})
	}
}
