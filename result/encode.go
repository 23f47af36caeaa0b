package result

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
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
	enc := json.NewEncoder(w)
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
		b   []byte
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
				var b []byte
				var err error
				for i := c * chunk; i < min((c+1)*chunk, len(r.Scenarios)); i++ {
					b = append(b, ",\n    "...)
					var sc []byte
					if sc, err = json.MarshalIndent(&r.Scenarios[i], "    ", "  "); err != nil {
						break
					}
					b = append(b, sc...)
				}
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
		b := p.b
		if c == 0 {
			b = b[1:] // the first element has no comma before it
		}
		if _, err = w.Write(b); err != nil {
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

// writeFileAtomic is WriteFileAtomic with the content written by write, through a buffer.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	werr := write(bw)
	if werr == nil {
		werr = bw.Flush()
	}
	perr := f.Chmod(0o644) // CreateTemp makes 0600; results are meant to be shared
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, perr, serr, cerr); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}
