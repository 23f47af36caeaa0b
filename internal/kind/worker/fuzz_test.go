package worker

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

// FuzzReply feeds arbitrary lines to the decoding of a run reply, as DoBatch does: no panic, and
// a reply it accepts gives observations that end after they start with finite figures.
func FuzzReply(f *testing.F) {
	for _, s := range []string{
		`{"id":3,"ok":true,"n":2,"latency_ms":[1.5,2],"items":4,"ttft_ms":[0.5,null],"token_ms":[[0.5,1],[]],"token_count":1,"input_tokens":8,"output_tokens":[2,0],"iter_values":{"gpu_ms":[1,null]},"values":{"memory_mb":100}}`,
		`{"id":3,"ok":true,"n":1,"latency_ms":[-1]}`, `{"id":3,"ok":true,"n":1,"latency_ms":[1e308],"items":[1e300]}`,
		`{"id":3,"ok":true,"latency_ms":[1],"ttft_ms":"x"}`, `{"id":3}`, `[]`,
	} {
		f.Add([]byte(s), uint8(2))
	}
	f.Fuzz(func(t *testing.T, line []byte, n uint8) {
		var rr runReply
		if json.Unmarshal(line, &rr) != nil || len(rr.LatencyMS) != int(n) || n == 0 {
			return
		}
		if rr.check() != nil {
			return
		}
		t0 := time.Unix(1000, 0)
		for i, o := range observations(&rr, int(n), t0, t0.Add(time.Second)) {
			if o.End.Before(o.Start) {
				t.Fatalf("iteration %d ends before it starts: %v", i, o)
			}
			for k, v := range o.Values {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("iteration %d: %s = %v", i, k, v)
				}
			}
			if o.Items < 0 || o.OutputTokens < 0 || o.InputTokens < 0 {
				t.Fatalf("iteration %d: negative counts %+v", i, o)
			}
		}
	})
}
