package finite_test

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/internal/base/finite"
)

type interval struct {
	Lo, Hi float64
}

type row struct {
	Name   string             `json:"name"`
	Value  float64            `json:"value"`
	Small  float32            `json:"small"`
	CI     *interval          `json:"ci,omitempty"`
	Xs     []float64          `json:"xs"`
	ByName map[string]float64 `json:"by_name"`
	Any    any                `json:"any"`
	Arr    [2]float64         `json:"arr"`
	hidden float64
}

// marshaled has a MarshalJSON method, as compare.Row does: its output goes through it too.
type marshaled struct{ V float64 }

func (m marshaled) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]float64{"v": m.V})
}

func TestNonFiniteIsNull(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	r := &row{
		Name:   "a string that holds 1.7976931348623157e+308 stays as it is",
		Value:  math.Inf(-1),
		Small:  float32(math.Inf(1)),
		CI:     &interval{Lo: math.Inf(-1), Hi: 3},
		Xs:     []float64{1, nan, 2},
		ByName: map[string]float64{"x": inf, "y": 4},
		Any:    []any{nan, 5.5, marshaled{inf}},
		Arr:    [2]float64{nan, 6},
		hidden: nan,
	}
	if _, err := json.Marshal(r); !finite.Refused(err) {
		t.Fatalf("encoding/json: %v, want it to refuse the document", err)
	}
	b, err := finite.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"a string that holds 1.7976931348623157e+308 stays as it is","value":null,"small":null,` +
		`"ci":{"Lo":null,"Hi":3},"xs":[1,null,2],"by_name":{"x":null,"y":4},"any":[null,5.5,{"v":null}],"arr":[null,6]}`
	if string(b) != want {
		t.Errorf("got\n%s\nwant\n%s", b, want)
	}
	// The value given is never changed.
	if !math.IsInf(r.CI.Lo, -1) || !math.IsNaN(r.Xs[1]) || !math.IsInf(r.ByName["x"], 1) || !math.IsNaN(r.Arr[0]) {
		t.Errorf("the encoded value was changed: %+v", r)
	}
}

func TestFiniteIsEncodingJSON(t *testing.T) {
	r := row{Name: "<b>&", Value: 1e-7, Xs: []float64{1e21, -0.5}, ByName: map[string]float64{"b": 1, "a": 2}, Any: "x"}
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetIndent("> ", "\t")
	if err := enc.Encode(r); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	fe := finite.NewEncoder(&got)
	fe.SetIndent("> ", "\t")
	if err := fe.Encode(r); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Errorf("got\n%s\nwant\n%s", got.String(), want.String())
	}
}

func TestIndentedNulls(t *testing.T) {
	b, err := finite.MarshalIndent(map[string][]float64{"ci": {math.Inf(-1), math.Inf(1)}}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"ci\": [\n    null,\n    null\n  ]\n}"; string(b) != want {
		t.Errorf("got %q, want %q", b, want)
	}
	// Other errors are encoding/json's.
	if _, err := finite.Marshal(make(chan int)); err == nil || !strings.Contains(err.Error(), "unsupported type") {
		t.Errorf("a channel: %v, want encoding/json's error", err)
	}
}

// A real figure as large as a sentinel stays a number beside the nulls.
func TestHugeFiguresStay(t *testing.T) {
	next := math.Nextafter(math.MaxFloat64, 0)
	b, err := finite.Marshal([]float64{math.MaxFloat64, math.NaN(), next, -math.MaxFloat64})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal([]float64{math.MaxFloat64, 0, next, -math.MaxFloat64})
	if w := strings.Replace(string(want), ",0,", ",null,", 1); string(b) != w {
		t.Errorf("got %s, want %s", b, w)
	}
}
