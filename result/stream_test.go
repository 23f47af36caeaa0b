package result

import (
	"bytes"
	"encoding/json"
	"errors"
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
