package result

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/inferbench/inferbench/internal/readall"
)

// StreamMin is the size from which a run.json is decoded as a stream, one scenario at a time
// (decodeStream), instead of read whole first: the file's bytes are then never all in memory
// beside the run they make. docs/reliability.md states the memory each way costs.
const StreamMin = 16 << 20

// batchBytes is about how much of a run.json's scenarios decodeStream decodes at once.
var batchBytes = 4 << 20 // a variable for tests

// errNotStreamable says a document is not in the form decodeStream reads; the caller reads it
// whole, which gives encoding/json's result or error.
var errNotStreamable = errors.New("not in the form read as a stream")

// decodeStream decodes a run document from r one scenario at a time: the top-level keys but
// "scenarios" are gathered and decoded together at the end; each scenario is decoded on its own
// as decodeRun decodes a run of one scenario. It gives the run encoding/json gives for the same
// bytes, or errNotStreamable for a document it does not read the same way: a key twice or in
// another case (encoding/json merges or folds them), "scenarios" not a list, a syntax error,
// anything after the document. keys gets the top-level keys.
func decodeStream(r io.Reader, run *Run, keys map[string]bool) error {
	dec := json.NewDecoder(r)
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return errNotStreamable
	}
	var head bytes.Buffer // the other top-level keys, as an object
	head.WriteByte('{')
	var scenarios []Scenario
	var one Run
	for dec.More() {
		t, err := dec.Token()
		key, ok := t.(string)
		if err != nil || !ok || keys[key] {
			return errNotStreamable
		}
		keys[key] = true
		if key != "scenarios" {
			var raw json.RawMessage
			if strings.EqualFold(key, "scenarios") || dec.Decode(&raw) != nil {
				return errNotStreamable
			}
			if head.Len() > 1 {
				head.WriteByte(',')
			}
			k, _ := json.Marshal(key)
			head.Write(k)
			head.WriteByte(':')
			head.Write(raw)
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			return errNotStreamable
		}
		// Scenarios are decoded in batches of about batchBytes, as a run of those scenarios.
		doc := []byte(`{"scenarios":[`)
		n := 0
		flush := func() bool {
			if n == 0 {
				return true
			}
			doc = append(doc, "]}"...)
			one = Run{Scenarios: make([]Scenario, 0, n)}
			if err := decodeRun(doc, &one); err != nil || len(one.Scenarios) != n {
				return false
			}
			scenarios = append(scenarios, one.Scenarios...)
			doc, n = append(doc[:0], `{"scenarios":[`...), 0
			return true
		}
		var raw json.RawMessage
		for dec.More() {
			if err := dec.Decode(&raw); err != nil {
				return errNotStreamable
			}
			if n > 0 {
				doc = append(doc, ',')
			}
			doc, n = append(doc, raw...), n+1
			if len(doc) >= batchBytes && !flush() {
				return errNotStreamable
			}
		}
		if !flush() {
			return errNotStreamable
		}
		if t, err := dec.Token(); err != nil || t != json.Delim(']') {
			return errNotStreamable
		}
		if scenarios == nil {
			scenarios = []Scenario{}
		}
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return errNotStreamable
	}
	if _, err := dec.Token(); err != io.EOF {
		return errNotStreamable // something after the document: the whole reading decides
	}
	head.WriteByte('}')
	if err := json.Unmarshal(head.Bytes(), run); err != nil {
		return errNotStreamable
	}
	run.Scenarios = scenarios
	return nil
}

// loadStream decodes the run.json at path as a stream when it is at least StreamMin bytes and
// in the form decodeStream reads, and checks it as Decode does; done is false when it was not
// (the caller reads the file whole). With asImport, a document holding the keys of another
// tool's JSON (benchmarks, results) or no schema is left to Import's detection.
func loadStream(path, name string, asImport bool) (r *Run, done bool, err error) {
	f, err := readall.Open(path)
	if err != nil {
		return nil, true, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() < StreamMin || fi.Size() > readall.RunLimit {
		return nil, false, nil
	}
	var run Run
	keys := map[string]bool{}
	if decodeStream(bufio.NewReaderSize(f, 1<<20), &run, keys) != nil {
		return nil, false, nil
	}
	if asImport && (keys["benchmarks"] || keys["results"] || !keys["schema"]) {
		return nil, false, nil
	}
	r, err = check(&run, name)
	return r, true, err
}

// check is Decode's check of a decoded run.
func check(r *Run, path string) (*Run, error) {
	if r.Schema != Schema {
		return nil, fmt.Errorf("%s: schema %q, want %q", path, r.Schema, Schema)
	}
	if err := r.CheckValues(); err != nil {
		return nil, fmt.Errorf("%s: corrupt run file: %w", path, err)
	}
	if r.FinishedAt.IsZero() {
		r.Partial = true
	}
	inertNames(r)
	return r, nil
}

// ImportFile is Import of the file at path, read through readall (a regular file, at most
// readall.RunLimit bytes). A large run.json is decoded as a stream (loadStream).
func ImportFile(path, name, format, id, bench string, at time.Time) (*Run, error) {
	if format == "inferbench" || format == "auto" {
		if r, done, err := loadStream(path, name, format == "auto"); done {
			return r, err
		}
	}
	data, err := readall.File(path, readall.RunLimit)
	if err != nil {
		return nil, err
	}
	return Import(data, name, format, id, bench, at)
}
