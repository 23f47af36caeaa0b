package registry_test

import (
	"fmt"
	"testing"

	"github.com/inferbench/inferbench/internal/base/registry"
)

func ExampleMap() {
	r := registry.New[int]("example:")
	r.Add("b", 2)
	r.Add("a", 1)
	v, ok := r.Get("b")
	fmt.Println(r.Names(), v, ok)
	// Output: [a b] 2 true
}

func TestAddTwicePanics(t *testing.T) {
	r := registry.New[int]("gofunc:")
	r.Add("f", 1)
	defer func() {
		if got, want := recover(), "gofunc: f registered twice"; got != want {
			t.Errorf("panic = %v, want %q", got, want)
		}
	}()
	r.Add("f", 2)
}

func TestGetMissing(t *testing.T) {
	r := registry.New[string]("x:")
	if v, ok := r.Get("nope"); ok || v != "" {
		t.Errorf("Get(nope) = %q, %v; want the zero value and false", v, ok)
	}
}
