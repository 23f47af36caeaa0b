// Command gofunc shows a Go program that is its own benchmark binary: it registers functions with
// inferbench and hands the command line to inferbench.Main.
//
//	go run ./examples/gofunc run examples/gofunc
package main

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/inferbench/inferbench"
)

func main() {
	// A function per iteration, no setup.
	inferbench.Register("json-decode", func(ctx context.Context) error {
		var v map[string]any
		return json.Unmarshal([]byte(`{"model":"resnet50","batch":8,"shape":[8,3,224,224]}`), &v)
	})
	// Setup once per scenario: build the input from the scenario's parameters.
	inferbench.RegisterSetup("tokenize", func(ctx context.Context, p inferbench.Params) (func(context.Context) error, func(), error) {
		text := strings.Repeat("the quick brown fox jumps over the lazy dog ", p.Int("words", 100)/9+1)
		return func(context.Context) error {
			_ = strings.Fields(text)
			return nil
		}, nil, nil
	})
	inferbench.Main()
}
