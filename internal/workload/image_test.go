package workload

import (
	"strings"
	"testing"
)

// TestImages: every prompt carries the images asked, taken in turn from ImageSet distinct ones;
// a bad configuration names its key.
func TestImages(t *testing.T) {
	s, err := Open(Config{Images: ImageConfig{Count: 2, Width: 8, Height: 8}}, "")
	if err != nil {
		t.Fatal(err)
	}
	a, b := s.Prompt(0), s.Prompt(1)
	if len(a.Images) != 2 || !strings.HasPrefix(a.Images[0], "data:image/jpeg;base64,") || a.Images[0] == a.Images[1] || a.Images[0] == b.Images[0] {
		t.Errorf("images of requests 0 and 1 are not two distinct JPEG data URLs each")
	}
	if s.Prompt(ImageSet / 2).Images[0] != a.Images[0] {
		t.Errorf("request %d does not reuse the first image", ImageSet/2)
	}
	for _, tt := range []struct {
		c    ImageConfig
		want string
	}{
		{ImageConfig{Count: 65}, "images.count 65"},
		{ImageConfig{Count: 1, Width: 9000}, "9000 × 512 pixels"},
		{ImageConfig{Count: 1, Format: "gif"}, `images.format "gif"`},
	} {
		if _, err := Open(Config{Images: tt.c}, ""); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.c, err, tt.want)
		}
	}
}
