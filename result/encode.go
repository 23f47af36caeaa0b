package result

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"sync"

	"github.com/inferbench/inferbench/internal/base/finite"
)

// WriteJSON writes the run as indented JSON (two spaces, a final newline): the bytes
// json.Encoder with SetIndent("", "  ") writes. A run of many scenarios is encoded in chunks of
// scenarios on every CPU and streamed to w in order, so that a merged run of 64,000 scenarios is
// neither encoded on one core nor held whole in memory; on an error, part of the document may
// have been written.
func WriteJSON(w io.Writer, r *Run) error {
	if len(r.Scenarios) < 2*jsonChunk {
		return writeJSONWhole(w, r)
	}
	return writeJSONChunked(w, r, jsonChunk, runtime.GOMAXPROCS(0))
}

// jsonChunk is how many scenarios one encoding task takes.
const jsonChunk = 128

// writeJSONWhole is encoding/json's output, encoded at once.
func writeJSONWhole(w io.Writer, r *Run) error {
	enc := finite.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// scenariosMark is where the scenarios go in a run encoded without them: the run's own field
// (indented once; a string in the document cannot hold a raw newline).
var scenariosMark = []byte("\n  \"scenarios\": []")

// writeJSONChunked writes what writeJSONWhole writes: the run without its scenarios, encoded
// whole, is cut where its empty scenarios array is, and the scenarios, each encoded as an
// element at depth two, go between. workers encode chunk scenarios at a time; at most 4*workers
// chunks are held.
func writeJSONChunked(w io.Writer, r *Run, chunk, workers int) error {
	if len(r.Scenarios) == 0 { // null or []
		return writeJSONWhole(w, r)
	}
	head := *r
	head.Scenarios = []Scenario{}
	var hb bytes.Buffer
	if err := writeJSONWhole(&hb, &head); err != nil {
		return err
	}
	doc := hb.Bytes()
	at := bytes.Index(doc, scenariosMark)
	if at < 0 || bytes.Contains(doc[at+1:], scenariosMark) {
		return writeJSONWhole(w, r) // not the layout this relies on
	}
	open := at + len(scenariosMark) - 1 // the ']' of "[]"
	if _, err := w.Write(doc[:open]); err != nil {
		return err
	}

	n := (len(r.Scenarios) + chunk - 1) / chunk
	type piece struct {
		b   *[]byte
		err error
	}
	outs := make([]chan piece, n)
	for i := range outs {
		outs[i] = make(chan piece, 1)
	}
	window := make(chan struct{}, 4*workers) // chunks encoded but not yet written
	stop := make(chan struct{})
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range next {
				b := chunkBuffers.Get().(*[]byte)
				out := (*b)[:0]
				var err error
				for i := c * chunk; i < min((c+1)*chunk, len(r.Scenarios)); i++ {
					out = append(out, ",\n    "...)
					if out, err = appendScenario(out, &r.Scenarios[i]); err != nil {
						break
					}
				}
				*b = out
				outs[c] <- piece{b, err}
			}
		}()
	}
	go func() {
		defer close(next)
		for c := range n {
			select {
			case window <- struct{}{}:
			case <-stop:
				return
			}
			select {
			case next <- c:
			case <-stop:
				return
			}
		}
	}()
	var err error
	for c := range n {
		p := <-outs[c]
		<-window
		if p.err != nil {
			err = p.err
			break
		}
		b := *p.b
		if c == 0 {
			b = b[1:] // the first element has no comma before it
		}
		_, err = w.Write(b)
		chunkBuffers.Put(p.b)
		if err != nil {
			break
		}
	}
	close(stop)
	wg.Wait()
	if err != nil {
		return err
	}
	if _, err := io.WriteString(w, "\n  "); err != nil {
		return err
	}
	_, err = w.Write(doc[open:])
	return err
}

// chunkBuffers hold encoded chunks between the workers and the writer.
var chunkBuffers = sync.Pool{New: func() any { return new([]byte) }}

// appendScenario appends the scenario as an element of the run's scenarios array (at depth
// two), as json.MarshalIndent(sc, "    ", "  ") does. The metrics are written here: their raw
// samples are most of the bytes, and encoding/json's reflection over them, then its indenting,
// most of the time. The rest of the scenario is encoding/json's, the metrics spliced in after
// the iterations (the field before them) where they would be.
func appendScenario(b []byte, sc *Scenario) ([]byte, error) {
	start := len(b)
	whole := func() ([]byte, error) {
		doc, err := finite.MarshalIndent(sc, "    ", "  ")
		return append(b[:start], doc...), err
	}
	if len(sc.Metrics) == 0 {
		return whole()
	}
	bare := *sc
	bare.Metrics = nil
	doc, err := json.MarshalIndent(&bare, "    ", "  ")
	if err != nil {
		return whole()
	}
	at := bytes.Index(doc, iterationsMark)
	if at < 0 {
		return whole()
	}
	end := bytes.Index(doc[at+len(iterationsMark):], fieldsEnd)
	if end < 0 {
		return whole()
	}
	end += at + len(iterationsMark) + len(fieldsEnd)
	b = append(b, doc[:end]...)
	b = append(b, ",\n      \"metrics\": {"...)
	names := make([]string, 0, len(sc.Metrics))
	for name := range sc.Metrics {
		names = append(names, name)
	}
	slices.Sort(names)
	for i, name := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n        "...)
		var ok bool
		if b, ok = appendString(b, name); ok {
			b = append(b, ": "...)
			b, ok = appendMetric(b, sc.Metrics[name])
		}
		if !ok { // a value encoding/json refuses: its error
			return whole()
		}
	}
	b = append(b, "\n      }"...)
	return append(b, doc[end:]...), nil
}

// iterationsMark opens a scenario's iterations (the field before its metrics), fieldsEnd closes
// it; indented as a scenario of a run (a string cannot hold a raw newline).
var (
	iterationsMark = []byte("\n      \"iterations\": {")
	fieldsEnd      = []byte("\n      }")
)

// appendMetric appends m as a value of a scenario's metrics (at depth four).
func appendMetric(b []byte, m Metric) ([]byte, bool) {
	b = append(b, "{\n          \"unit\": "...)
	b, ok := appendString(b, m.Unit)
	if !ok {
		return b, false
	}
	b = append(b, ",\n          \"better\": "...)
	if b, ok = appendString(b, m.Better); !ok {
		return b, false
	}
	if m.Value != nil {
		b = append(b, ",\n          \"value\": "...)
		if b, ok = appendFloat(b, *m.Value); !ok {
			return b, false
		}
	}
	if m.Summary != nil {
		s, err := finite.MarshalIndent(m.Summary, "          ", "  ")
		if err != nil {
			return b, false
		}
		b = append(b, ",\n          \"summary\": "...)
		b = append(b, s...)
	}
	if len(m.Samples) > 0 {
		b = append(b, ",\n          \"samples\": ["...)
		for i, v := range m.Samples {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, "\n            "...)
			if b, ok = appendFloat(b, v); !ok {
				return b, false
			}
		}
		b = append(b, "\n          ]"...)
	}
	if m.Note != "" {
		b = append(b, ",\n          \"note\": "...)
		if b, ok = appendString(b, m.Note); !ok {
			return b, false
		}
	}
	return append(b, "\n        }"...), ok
}

// appendString appends s as encoding/json writes a string (HTML characters escaped).
func appendString(b []byte, s string) ([]byte, bool) {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, err := json.Marshal(s)
			return append(b, q...), err == nil
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"'), true
}

// appendFloat appends f as encoding/json writes a float64; false for NaN and infinities.
func appendFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' { // e-09 is written e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}
