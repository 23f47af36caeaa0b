package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"testing/iotest"
)

// checkStream checks that decodeStream decodes what json.Decoder decodes, or leaves the
// document to the whole reading (errNotStreamable).
func checkStream(t *testing.T, doc []byte) (streamed bool) {
	t.Helper()
	var got, want Run
	err := decodeStream(bytes.NewReader(doc), &got, map[string]bool{})
	if errors.Is(err, errNotStreamable) {
		return false
	}
	if err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	if werr := json.NewDecoder(bytes.NewReader(doc)).Decode(&want); werr != nil {
		t.Fatalf("%s: streamed, but encoding/json refuses it: %v", doc, werr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: streamed %+v, encoding/json %+v", doc, got, want)
	}
	// Read a byte at a time: every value cut at the window's end.
	var slow Run
	if err := decodeStream(iotest.OneByteReader(bytes.NewReader(doc)), &slow, map[string]bool{}); err != nil || !reflect.DeepEqual(slow, want) {
		t.Fatalf("%s: a byte at a time: %v, %+v", doc, err, slow)
	}
	return true
}

// TestDecodeStreamAgrees: a run.json decoded as a stream is the run encoding/json decodes, in
// batches of any size; the forms it does not read the same way are left to the whole reading.
func TestDecodeStreamAgrees(t *testing.T) {
	for _, doc := range runDocs {
		checkStream(t, []byte(doc))
	}
	var b bytes.Buffer
	if err := WriteJSON(&b, manyScenarios(40)); err != nil {
		t.Fatal(err)
	}
	defer func(n int) { batchBytes = n }(batchBytes)
	for _, n := range []int{1, 1000, 1 << 20} {
		batchBytes = n
		if !checkStream(t, b.Bytes()) {
			t.Fatalf("batches of %d bytes: the run WriteJSON writes was not streamed", n)
		}
	}
}

// TestLoadStreams: Load and ImportFile read a run.json of StreamMin bytes or more as a stream
// (its bytes are never all in memory beside the run), with the run Decode gives.
func TestLoadStreams(t *testing.T) {
	r := manyScenarios(40)
	var b bytes.Buffer
	if err := WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), RunFile)
	// Padding after the last key, as white space, makes it large without more scenarios.
	doc := append(bytes.TrimRight(b.Bytes(), "}\n"), '\n')
	doc = append(append(doc, bytes.Repeat([]byte(" "), streamMin)...), "}\n"...)
	if err := os.WriteFile(path, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := Decode(doc, path)
	if err != nil {
		t.Fatal(err)
	}
	got, done, err := loadStream(path, path, false)
	if !done || err != nil {
		t.Fatalf("loadStream: done %v, %v", done, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("streamed run differs from Decode's")
	}
	imp, err := ImportFile(path, "run.json", "auto", "x", "b", r.StartedAt)
	if err != nil || !reflect.DeepEqual(imp, want) {
		t.Errorf("ImportFile: %v (same run: %v)", err, reflect.DeepEqual(imp, want))
	}
}

// FuzzDecodeStream checks decodeStream against json.Decoder on arbitrary documents.
func FuzzDecodeStream(f *testing.F) {
	for _, doc := range runDocs {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkStream(t, data)
	})
}

// scanAll reads the run.json at path with a Scanner: the run its head and batches make, the
// number of batches, and whether the file was read so.
func scanAll(t *testing.T, path string) (r *Run, batches int, ok bool, err error) {
	t.Helper()
	s, ok, err := OpenScanner(path, path, false)
	if !ok || err != nil {
		return nil, 0, ok, err
	}
	defer s.Close()
	got := *s.Head()
	for s.Scan() {
		got.Scenarios = append(got.Scenarios, s.Batch()...)
		batches++
	}
	return &got, batches, true, s.Err()
}

// TestScannerAgrees: a run.json read by a Scanner, a batch of scenarios at a time after its
// head, is the run Decode gives (checks and errors included), in batches of any size; the forms
// decodeStream leaves to the whole reading are left to it.
func TestScannerAgrees(t *testing.T) {
	defer func(n int) { batchBytes = n }(batchBytes)
	var many bytes.Buffer
	if err := WriteJSON(&many, manyScenarios(40)); err != nil {
		t.Fatal(err)
	}
	docs := append([]string{many.String(),
		// a scenario encoding/json refuses, after good ones: left to the whole reading
		`{"schema":"inferbench/run/v1","id":"x","scenarios":[{"benchmark":"a"},{"benchmark":7}]}`,
		// a value the check refuses: Decode's error
		`{"schema":"inferbench/run/v1","id":"x","scenarios":[{"benchmark":"a","metrics":{"latency_ms":{"value":-1}}}]}`,
		// keys after the scenarios, none at all, another schema
		`{"scenarios":[{"benchmark":"a"}],"schema":"inferbench/run/v1","id":"late","merged":{"group":"g"}}`,
		`{"schema":"inferbench/run/v1","id":"none"}`,
		`{"schema":"other","scenarios":[]}`,
	}, runDocs...)
	dir := t.TempDir()
	for i, doc := range docs {
		path := filepath.Join(dir, fmt.Sprint(i, ".json"))
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		want, werr := Decode([]byte(doc), path)
		for _, n := range []int{1, 1000, 1 << 20} {
			batchBytes = n
			got, batches, ok, err := scanAll(t, path)
			switch {
			case !ok:
				if i == 0 {
					t.Fatalf("the run WriteJSON writes was not read by a Scanner")
				}
			case errors.Is(err, ErrNotStreamable):
				if werr == nil {
					t.Errorf("%s: left to the whole reading, which reads it", doc)
				}
			case werr != nil || err != nil:
				if werr == nil || err == nil || err.Error() != werr.Error() {
					t.Errorf("%s, batches of %d bytes: error %v, Decode's %v", doc, n, err, werr)
				}
			case !reflect.DeepEqual(got, want):
				t.Errorf("%s, batches of %d bytes: scanned %+v, Decode %+v", doc, n, got, want)
			case i == 0 && n == 1 && batches != 40:
				t.Errorf("batches of 1 byte: %d batches of 40 scenarios, want 40", batches)
			}
		}
	}
}
