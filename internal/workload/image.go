package workload

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
)

// ImageConfig adds images to every chat prompt (multimodal requests): Count images of Width ×
// Height pixels, sent as data URLs in the message's content parts, as OpenAI's API takes them.
// The images are seeded noise over a gradient: ImageSet distinct ones, taken in turn.
type ImageConfig struct {
	// Count is the number of images in each request (0: none).
	Count int `yaml:"count" json:"count,omitempty"`
	// Width and Height are the images' size in pixels (default 512 × 512).
	Width  int `yaml:"width" json:"width,omitempty"`
	Height int `yaml:"height" json:"height,omitempty"`
	// Format is "jpeg" (the default) or "png".
	Format string `yaml:"format" json:"format,omitempty"`
}

// ImageSet is the number of distinct images a workload makes; requests take them in turn, so a
// server's image cache sees repeats only after that many.
const ImageSet = 16

// maxImageSide bounds an image's width and height.
const maxImageSide = 8192

// images makes the data URLs of a workload's images.
func (c ImageConfig) images(seed uint64) ([]string, error) {
	if c.Count < 0 || c.Count > 64 {
		return nil, fmt.Errorf("workload images.count %d: want 0 to 64", c.Count)
	}
	if c.Count == 0 {
		return nil, nil
	}
	w, h := c.Width, c.Height
	if w == 0 {
		w = 512
	}
	if h == 0 {
		h = 512
	}
	if w < 1 || h < 1 || w > maxImageSide || h > maxImageSide {
		return nil, fmt.Errorf("workload images: %d × %d pixels: want sides from 1 to %d", w, h, maxImageSide)
	}
	mime := "image/jpeg"
	switch c.Format {
	case "", "jpeg", "jpg":
	case "png":
		mime = "image/png"
	default:
		return nil, fmt.Errorf("workload images.format %q: want jpeg or png", c.Format)
	}
	out := make([]string, ImageSet)
	for k := range out {
		r := rand.New(rand.NewPCG(seed, 0x1a9e+uint64(k)))
		img := image.NewRGBA(image.Rect(0, 0, w, h))
		base := [3]int{r.IntN(256), r.IntN(256), r.IntN(256)}
		for y := range h {
			for x := range w {
				img.SetRGBA(x, y, color.RGBA{
					uint8(base[0] + 128*x/w + r.IntN(32)), uint8(base[1] + 128*y/h + r.IntN(32)), uint8(base[2] + r.IntN(64)), 255})
			}
		}
		var b bytes.Buffer
		var err error
		if mime == "image/png" {
			err = png.Encode(&b, img)
		} else {
			err = jpeg.Encode(&b, img, &jpeg.Options{Quality: 85})
		}
		if err != nil {
			return nil, fmt.Errorf("workload images: %w", err)
		}
		out[k] = "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(b.Bytes())
	}
	return out, nil
}
