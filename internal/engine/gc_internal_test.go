package engine

import "testing"

// TestClientGCPercent: the target gives ClientGCHeadroom of headroom, never less than Go's
// default and never more than ClientGCPercentMax.
func TestClientGCPercent(t *testing.T) {
	for _, tt := range []struct {
		live uint64
		want int
	}{
		{0, ClientGCPercentMax},
		{1 << 20, ClientGCPercentMax}, // 3,200% would be 32 MB of headroom over 1 MB
		{8 << 20, 400},
		{16 << 20, 200},
		{32 << 20, 100},
		{1 << 30, 100}, // a large heap keeps Go's default: headroom as large as itself
	} {
		if got := clientGCPercent(tt.live); got != tt.want {
			t.Errorf("live %d MB: GOGC %d, want %d", tt.live>>20, got, tt.want)
		}
	}
}
