package result

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// decodeRun decodes the first JSON value of data into r as json.Decoder does, faster for the
// common document: the raw samples of the metrics (scenarios[].metrics.*.samples, most of the
// bytes of a run.json) are read here, each array left in the document as a placeholder ([k], its
// index) for encoding/json to decode the rest, and put back after. Whatever the lifting does not
// expect (another spelling of a key, a sample that is not a number, a document encoding/json
// refuses) is decoded by encoding/json from the original bytes, so that the result and the
// errors are encoding/json's.
func decodeRun(data []byte, r *Run) error {
	if reduced, samples, ok := liftSamples(data); ok {
		// json.Unmarshal reads reduced in place (a Decoder copies it into buffers it grows: 6 MB
		// a shard of 1,000 scenarios); it refuses what follows the value, which the Decoder below
		// ignores, so such a document takes the slow path.
		var fast Run
		if err := json.Unmarshal(reduced, &fast); err == nil && restoreSamples(&fast, samples) {
			*r = fast
			return nil
		}
	}
	return json.NewDecoder(bytes.NewReader(data)).Decode(r)
}

// restoreSamples replaces each metric's placeholder with its samples; false when a metric holds
// something else.
func restoreSamples(r *Run, samples [][]float64) bool {
	for i := range r.Scenarios {
		for name, m := range r.Scenarios[i].Metrics {
			if m.Samples == nil {
				continue
			}
			if len(m.Samples) != 1 {
				return false
			}
			k := int(m.Samples[0])
			if float64(k) != m.Samples[0] || k < 0 || k >= len(samples) {
				return false
			}
			m.Samples = samples[k]
			r.Scenarios[i].Metrics[name] = m
		}
	}
	return true
}

// lifter walks a run document (only as deep as the samples) and records the arrays it lifts.
type lifter struct {
	b       []byte
	i       int
	cuts    [][2]int // [start, end) of each lifted array, in order
	samples [][]float64
	scratch []float64
}

// liftSamples returns data with every metric's samples array replaced by its placeholder, and
// the arrays; false when the document is not in the form it expects.
func liftSamples(data []byte) ([]byte, [][]float64, bool) {
	l := &lifter{b: data}
	if !l.object(l.root) {
		return nil, nil, false
	}
	if len(l.cuts) == 0 {
		return data, nil, true
	}
	size := len(data)
	for _, c := range l.cuts {
		size -= c[1] - c[0] - 2 - len(strconv.Itoa(len(l.cuts))) // at most "[k]" for each array
	}
	out := make([]byte, 0, size)
	at := 0
	for k, c := range l.cuts {
		out = append(out, data[at:c[0]]...)
		out = append(out, '[')
		out = strconv.AppendInt(out, int64(k), 10)
		out = append(out, ']')
		at = c[1]
	}
	return append(out, data[at:]...), l.samples, true
}

// fieldIs checks a key of an object whose fields matter: a key that is not name but that
// encoding/json could match to it (another case, an escape, a non-ASCII letter that folds)
// stops the lifting.
func fieldIs(key []byte, name string) (is, ok bool) {
	if string(key) == name {
		return true, true
	}
	if bytes.IndexByte(key, '\\') >= 0 || strings.EqualFold(string(key), name) {
		return false, false
	}
	for _, c := range key {
		if c >= 0x80 {
			return false, false
		}
	}
	return false, true
}

func (l *lifter) root(key []byte) bool {
	return l.descend(key, "scenarios", '[', l.scenario)
}

func (l *lifter) scenario(key []byte) bool {
	return l.descend(key, "metrics", '{', l.metric) // each metric, under any name
}

// descend reads the value of the field named name when it opens with open ('[' or '{'), handing
// each member that is an object to field; it skips any other field, and is false on malformed input.
func (l *lifter) descend(key []byte, name string, open byte, field func(key []byte) bool) bool {
	is, ok := fieldIs(key, name)
	switch {
	case !ok:
		return false
	case is && l.peek() == open:
		member := func() bool {
			if l.peek() == '{' {
				return l.object(field)
			}
			return l.skip()
		}
		if open == '[' {
			return l.array(member)
		}
		return l.object(func([]byte) bool { return member() })
	}
	return l.skip()
}

func (l *lifter) metric(key []byte) bool {
	is, ok := fieldIs(key, "samples")
	switch {
	case !ok:
		return false
	case is && l.peek() == '[':
		return l.numbers()
	}
	return l.skip()
}

// peek returns the next byte after white space (0 at the end).
func (l *lifter) peek() byte {
	l.i = skipSpace(l.b, l.i)
	if l.i < len(l.b) {
		return l.b[l.i]
	}
	return 0
}

// skipSpace returns the index of the first byte of b at or after i that is not JSON white space
// (len(b) when there is none); the lifter and the window both peek through it.
func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// object reads an object, calling field with the raw bytes of each key (positioned at its value).
func (l *lifter) object(field func(key []byte) bool) bool {
	if l.peek() != '{' {
		return false
	}
	l.i++
	if l.peek() == '}' {
		l.i++
		return true
	}
	for {
		if l.peek() != '"' {
			return false
		}
		start := l.i + 1
		if !l.skipString() {
			return false
		}
		key := l.b[start : l.i-1]
		if l.peek() != ':' {
			return false
		}
		l.i++
		if !field(key) {
			return false
		}
		switch l.peek() {
		case ',':
			l.i++
		case '}':
			l.i++
			return true
		default:
			return false
		}
	}
}

// array reads an array, calling elem at each element.
func (l *lifter) array(elem func() bool) bool {
	l.i++ // '['
	if l.peek() == ']' {
		l.i++
		return true
	}
	for {
		if !elem() {
			return false
		}
		switch l.peek() {
		case ',':
			l.i++
		case ']':
			l.i++
			return true
		default:
			return false
		}
	}
}

// numbers lifts an array of JSON numbers that fit a float64.
func (l *lifter) numbers() bool {
	start := l.i
	xs := l.scratch[:0]
	ok := l.array(func() bool {
		l.peek()
		n := numberLen(l.b[l.i:])
		if n == 0 {
			return false
		}
		v, err := strconv.ParseFloat(string(l.b[l.i:l.i+n]), 64)
		if err != nil {
			return false
		}
		xs = append(xs, v)
		l.i += n
		return true
	})
	l.scratch = xs
	if !ok {
		return false
	}
	l.cuts = append(l.cuts, [2]int{start, l.i})
	l.samples = append(l.samples, append(make([]float64, 0, len(xs)), xs...))
	return true
}

// numberLen returns the length of the JSON number b starts with (0 when none).
func numberLen(b []byte) int {
	i := 0
	digits := func() int {
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i, n = i+1, n+1
		}
		return n
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case digits() == 0:
		return 0
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return 0
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return 0
		}
	}
	if i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E' || b[i] == '-' || b[i] == '+' || (b[i] >= '0' && b[i] <= '9')) {
		return 0 // "01", "1.2.3": not one number
	}
	return i
}

// skipString passes over a string (at its opening quote).
func (l *lifter) skipString() bool {
	for l.i++; l.i < len(l.b); l.i++ {
		switch l.b[l.i] {
		case '\\':
			l.i++
		case '"':
			l.i++
			return true
		}
	}
	return false
}

// skip passes over any value; encoding/json checks what is skipped, in the document it decodes.
func (l *lifter) skip() bool {
	depth := 0
	for {
		switch c := l.peek(); c {
		case 0:
			return false
		case '"':
			if !l.skipString() {
				return false
			}
		case '{', '[':
			depth++
			l.i++
		case '}', ']':
			depth--
			if depth < 0 {
				return false
			}
			l.i++
		case ',', ':':
			if depth == 0 {
				return false
			}
			l.i++
		default:
			if depth == 0 && c != '-' && (c < '0' || c > '9') && c != 't' && c != 'f' && c != 'n' {
				return false
			}
			for l.i < len(l.b) && !delimiter(l.b[l.i]) {
				l.i++
			}
		}
		if depth == 0 {
			return true
		}
	}
}

func delimiter(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', ',', ':', '{', '}', '[', ']', '"':
		return true
	}
	return false
}
