package explain

import (
	"bytes"
	"fmt"
	"html/template"
	"math"
	"strings"
)

// The differential flame graph is drawn as an icicle, root on top, in SVG made here: it needs no
// script, prints, and a test can read it. Each frame is as wide as the larger of its old and new
// cost per call (children scaled into their parent when they would overflow it), in the same
// place for both runs (children by name), red where it grew and blue where it shrank, the deeper
// the color the larger the change relative to the frame.
const (
	flameWidth  = 1200.0
	flameRow    = 18.0
	flameDepth  = 40
	flameMinPix = 0.5 // narrower frames are not drawn
)

// flameSVG draws the differential flame graph of n (Flame) as inline SVG.
func flameSVG(n *Node, unit string) template.HTML {
	if n == nil || max(n.Old, n.New) <= 0 {
		return ""
	}
	var body bytes.Buffer
	depth := 0
	var draw func(n *Node, x, w float64, d int)
	draw = func(n *Node, x, w float64, d int) {
		if w < flameMinPix || d >= flameDepth {
			return
		}
		depth = max(depth, d+1)
		y := float64(d) * flameRow
		change := flameChange(n.Old, n.New)
		tip := fmt.Sprintf("%s: %s → %s per call", n.Name, FormatCost(n.Old, unit), FormatCost(n.New, unit))
		if !math.IsNaN(change) && n.Old > 0 && n.New > 0 {
			tip += fmt.Sprintf(" (%+.1f%%)", 100*(n.New/n.Old-1))
		} else if n.Old == 0 {
			tip += " (added)"
		} else if n.New == 0 {
			tip += " (removed)"
		}
		fmt.Fprintf(&body, `<g class="frame" data-name="%s" data-change="%.4f"><title>%s</title><rect x="%.2f" y="%.0f" width="%.2f" height="%.0f" fill="%s"/>`,
			template.HTMLEscapeString(n.Name), change, template.HTMLEscapeString(tip), x, y, w, flameRow-1, flameColor(change))
		if label := flameLabel(n.Name, w-6); label != "" {
			fmt.Fprintf(&body, `<text x="%.2f" y="%.0f">%s</text>`, x+3, y+13, template.HTMLEscapeString(label))
		}
		body.WriteString("</g>\n")
		var sum float64
		for _, c := range n.Children {
			sum += max(c.Old, c.New)
		}
		scale := w / max(n.Old, n.New)
		if sum > max(n.Old, n.New) {
			scale = w / sum
		}
		cx := x
		for _, c := range n.Children {
			cw := max(c.Old, c.New) * scale
			draw(c, cx, cw, d+1)
			cx += cw
		}
	}
	draw(n, 0, flameWidth, 0)
	return template.HTML(fmt.Sprintf(`<svg class="flame" viewBox="0 0 %.0f %.0f" width="100%%" role="img" aria-label="differential flame graph: red grew, blue shrank" style="font: 11px sans-serif">%s</svg>`,
		flameWidth, float64(depth)*flameRow, body.String()))
}

// flameFont is the labels' font size in px (the svg's style).
const flameFont = 11.0

// flameLabel is as much of name as fits in width px, ending in "…" when cut; "" when fewer than
// three characters would. The widths are those of DejaVu Sans, the widest of the common sans-serif
// fonts (Debian's default): a label fits in the frame whatever sans-serif the browser picks.
func flameLabel(name string, width float64) string {
	ellipsis := runeEm('…') * flameFont
	used, cut := 0.0, -1 // cut: the runes that fit with the ellipsis after them
	r := []rune(name)
	for i, c := range r {
		if used+ellipsis <= width {
			cut = i
		}
		used += runeEm(c) * flameFont
		if used > width {
			if cut < 2 {
				return ""
			}
			return string(r[:cut]) + "…"
		}
	}
	return name
}

// runeEm is a character's advance width in DejaVu Sans, in em (rounded up).
func runeEm(c rune) float64 {
	switch {
	case c == 'W' || c == 'm' || c == '…' || c == '%':
		return 1.0
	case c == 'M' || c == 'w' || c == '×' || c == '@' || c == '<' || c == '>' || c == '=' || c == '+' || c == '~':
		return 0.87
	case c >= 'A' && c <= 'Z':
		return 0.8
	case c == 'i' || c == 'j' || c == 'l' || c == '.' || c == ',' || c == ':' || c == ';' || c == '\'' || c == '|' || c == '!' || c == ' ':
		return 0.33
	case c == 'f' || c == 't' || c == 'r' || c == '(' || c == ')' || c == '[' || c == ']' || c == '{' || c == '}' || c == '-' || c == '/' || c == '\\':
		return 0.43
	case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c == '_' || c == '*' || c == '#' || c == '$' || c == '&' || c == '?' || c == '"':
		return 0.65
	case c < 0x2e80:
		return 0.8 // other Latin, Greek, Cyrillic, symbols
	}
	return 1.0 // CJK and wider
}

// flameChange is a frame's change relative to its larger cost, in [-1, 1].
func flameChange(old, nw float64) float64 {
	m := max(old, nw)
	if m <= 0 {
		return 0
	}
	return (nw - old) / m
}

// flameColor is red for growth and blue for shrinkage, deeper the larger the change; a frame
// within 1% is grey.
func flameColor(change float64) string {
	a := math.Min(1, math.Abs(change)*4) // +25% is full color
	if math.Abs(change) < 0.01 {
		return "#e6e6e6"
	}
	mix := func(full int) int { return int(math.Round(230 + (float64(full)-230)*a)) }
	if change > 0 {
		return fmt.Sprintf("#%02x%02x%02x", mix(0xcf), mix(0x22), mix(0x2e))
	}
	return fmt.Sprintf("#%02x%02x%02x", mix(0x21), mix(0x66), mix(0xd0))
}

// codeQuotes escapes text and shows its `quoted` names as code.
func codeQuotes(s string) template.HTML {
	parts := strings.Split(template.HTMLEscapeString(s), "`")
	var b strings.Builder
	for i, p := range parts {
		if i%2 == 1 && i < len(parts)-1 {
			b.WriteString("<code>" + p + "</code>")
		} else {
			if i%2 == 1 {
				b.WriteString("`")
			}
			b.WriteString(p)
		}
	}
	return template.HTML(b.String())
}
