package page

import (
	"math"
	"strconv"
)

// Chart is one chart of an HTML page, as data: the page's script turns it into an ECharts option.
// Keeping the shape here (not in JavaScript) keeps the choices testable and the script small.
type Chart struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// Kind is "line" (value or category x axis), "bar", "boxplot" or "scatter".
	Kind       string   `json:"kind"`
	XName      string   `json:"x_name,omitempty"`
	YName      string   `json:"y_name,omitempty"`
	Y2Name     string   `json:"y2_name,omitempty"`
	Categories []string `json:"categories,omitempty"` // category x axis; value axis when empty
	XTime      bool     `json:"x_time,omitempty"`     // x values are Unix milliseconds
	YLog       bool     `json:"y_log,omitempty"`
	Series     []Series `json:"series"`
	// Marks are vertical lines at x positions (change points on a trend).
	Marks []Mark `json:"marks,omitempty"`
	// Show is how many series the legend selects at first (0: all).
	Show int `json:"show,omitempty"`
}

// Series is one line, set of bars or boxes. Data holds [x, y] pairs on a value axis, or one value
// (or one box: min, p25, median, p75, p99) per category.
type Series struct {
	Name   string `json:"name"`
	Data   any    `json:"data"`
	Dashed bool   `json:"dashed,omitempty"`
	Y2     bool   `json:"y2,omitempty"`
	Type   string `json:"type,omitempty"` // overrides the chart's kind for this series
	Step   bool   `json:"step,omitempty"`
	Color  string `json:"color,omitempty"` // a CSS colour; the palette's next when empty
	// Err holds [x, lo, hi] error bars (confidence intervals) drawn over the series.
	Err [][3]Num `json:"err,omitempty"`
	// Marks are vertical lines drawn with this series (its change points).
	Marks []Mark `json:"marks,omitempty"`
}

// Mark is a labelled vertical line.
type Mark struct {
	X     Num    `json:"x"`
	Label string `json:"label"`
}

// Num is a figure in a page's chart data: four significant digits (a chart cannot show more) and
// null for NaN or infinities, which JSON cannot carry.
type Num float64

// MarshalJSON writes the number with four significant digits.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.AppendFloat(nil, f, 'f', -1, 64), nil
	}
	return strconv.AppendFloat(nil, f, 'g', 4, 64), nil
}
