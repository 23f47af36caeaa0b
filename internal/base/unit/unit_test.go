package unit

import (
	"testing"
	"time"
)

func TestMS(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want float64
	}{
		{0, 0},
		{1500 * time.Microsecond, 1.5}, // a fraction of a millisecond keeps its digits
		{250 * time.Nanosecond, 0.00025},
		{-2 * time.Second, -2000}, // a negative offset stays negative
	} {
		if got := MS(c.d); got != c.want {
			t.Errorf("MS(%v) = %v, want %v", c.d, got, c.want)
		}
	}
}
