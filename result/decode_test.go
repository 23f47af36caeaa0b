package result

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// runDocs are run documents in the form WriteJSON writes and in the forms decodeRun leaves to
// encoding/json.
var runDocs = []string{
	`{"scenarios":[{"metrics":{"latency_ms":{"unit":"ms","summary":{"n":3,"median":2},"samples":[1,2.5,-0,1e-9,3E+21]},"x":{"value":1}}},{"benchmark":"b"}]}`,
	"{\n  \"scenarios\": [\n    {\n      \"metrics\": {\n        \"a\": {\n          \"samples\": [\n            1,\n            2\n          ]\n        }\n      }\n    }\n  ]\n}\n",
	`{"scenarios":[{"metrics":{"a":{"samples":[]},"b":{"samples":null},"c":{},"d":{"samples":[0]}}}]}`,
	`{"scenarios":[{"metrics":{"a":{"samples":[1],"samples":[2,3]}}}]}`,                                 // a repeated key
	`{"scenarios":[{"metrics":{"a":{"samples":[1]}}}],"scenarios":[{"metrics":{"a":{"samples":[4]}}}]}`, // a repeated field
	`{"scenarios":[{"metrics":{"a":{"samples":[1]}},"metrics":{"b":{"samples":[2]}}}]}`,                 // maps merge
	`{"scenarios":[{"metrics":{"a":{"Samples":[1,2]}}}]}`,                                               // other spellings
	`{"Scenarios":[{"metrics":{"a":{"samples":[1,2]}}}]}`,
	`{"scenarios":[{"METRICS":{"a":{"samples":[1,2]}}}]}`,
	`{"scenarios":[{"metrics":{"a":{"ſamples":[1,2]}}}]}`,      // folds to samples
	`{"scenarios":[{"metrics":{"a":{"sampl\u0065s":[1,2]}}}]}`, // an escape
	`{"scenarios":[{"metrics":{"a\"b":{"samples":[1,2]},"é":{"samples":[3]}}}]}`,
	`{"scenarios":[{"metrics":{"a":{"samples":[1,"2"]}}}]}`, // not numbers
	`{"scenarios":[{"metrics":{"a":{"samples":[1,null]}}}]}`,
	`{"scenarios":[{"metrics":{"a":{"samples":[1,1e999]}}}]}`, // out of range
	`{"scenarios":[{"metrics":{"a":{"samples":[01]}}}]}`,      // not JSON numbers
	`{"scenarios":[{"metrics":{"a":{"samples":[.5]}}}]}`,
	`{"scenarios":[{"metrics":{"a":{"samples":[1.]}}}]}`,
	`{"scenarios":[{"metrics":{"a":{"samples":[+1]}}}]}`,
	`{"scenarios":[{"metrics":{"a":{"samples":[1,]}}}]}`,
	`{"scenarios":[{"metrics":{"a":{"samples":[1 2]}}}]}`,
	`{"scenarios":[{"metrics":{"a":{"samples":[0x10]}}}]}`,
	`{"scenarios":[{"metrics":{"a":{"samples":[1]}}}]} trailing`, // the decoder reads one value
	`{"scenarios":[{"metrics":{"a":{"samples":[1]}}}`,            // cut short
	`{"scenarios":[{"metrics":{"a":{"samples":[1]},}}]}`,
	`{"scenarios":[{"metrics":null},null,3,{"metrics":[1]},{"metrics":{"a":null,"b":[1]}}]}`,
	`{"scenarios":{"a":1}}`, `{"scenarios":null}`, `[]`, `null`, ``, `{`,
	`{"environment":{"scenarios":[{"metrics":{"a":{"samples":[1]}}}]},"scenarios":[]}`,
	`{"scenarios":[{"extra":{"metrics":{"a":{"samples":[1]}}},"metrics":{"a":{"samples":[5]}}}]}`,
	`{"scenarios":[{"metrics":{"a":{"samples":[1],"value":"x"}}}]}`, // an error elsewhere
	`{"scenarios":[{"metrics":{"a":{"samples":[1]}}}],"started_at":"not a time"}`,
	`{"a":tru,"scenarios":[{"metrics":{"a":{"samples":[1]}}}]}`,
	// After the value: json.Decoder reads the first and ignores the rest (json.Unmarshal would
	// refuse it).
	`{"scenarios":[{"metrics":{"a":{"samples":[1]}}}]} {"id":"x"}`,
	`{"scenarios":[{"metrics":{"a":{"samples":[1]}}}]}garbage`,
	`{"scenarios":[{"metrics":{"a":{"samples":[1]}}}]}` + "\n\n",
}

// TestDecodeAgrees checks that decodeRun decodes what json.Decoder decodes, and fails where it
// fails with its error.
func TestDecodeAgrees(t *testing.T) {
	for _, doc := range runDocs {
		checkDecode(t, []byte(doc))
	}
	var b bytes.Buffer
	if err := WriteJSON(&b, manyScenarios(40)); err != nil {
		t.Fatal(err)
	}
	checkDecode(t, b.Bytes())
}

func checkDecode(t *testing.T, doc []byte) {
	t.Helper()
	var got, want Run
	gerr := decodeRun(doc, &got)
	werr := json.NewDecoder(bytes.NewReader(doc)).Decode(&want)
	if fmt.Sprint(gerr) != fmt.Sprint(werr) {
		t.Fatalf("%s: error %v, encoding/json's %v", doc, gerr, werr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: decoded %+v, encoding/json %+v", doc, got, want)
	}
}

// TestLiftSamples checks that the common document is decoded by the lifting, not by the
// fallback.
func TestLiftSamples(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, manyScenarios(40)); err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, sc := range manyScenarios(40).Scenarios {
		for _, m := range sc.Metrics {
			if len(m.Samples) > 0 {
				want++
			}
		}
	}
	reduced, samples, ok := liftSamples(b.Bytes())
	if !ok || len(samples) != want {
		t.Fatalf("lifted %d arrays (ok %v), want the %d of the run", len(samples), ok, want)
	}
	if len(reduced) >= b.Len() {
		t.Errorf("the document without its samples is %d bytes, not less than %d", len(reduced), b.Len())
	}
}

// FuzzDecodeRun checks decodeRun against json.Decoder on arbitrary documents.
func FuzzDecodeRun(f *testing.F) {
	for _, doc := range runDocs {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecode(t, data)
	})
}
