package mockserver

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/inferbench/inferbench/internal/kind/openai"
	"github.com/inferbench/inferbench/internal/workload"
)

func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// events reads a stream and returns its events' data, checking each chunk is a JSON object.
func events(t *testing.T, r io.Reader) []map[string]any {
	t.Helper()
	sc := openai.NewScanner(r)
	var out []map[string]any
	sawDone := false
	for sc.Scan() {
		d := sc.Event().Data
		if string(d) == "[DONE]" {
			sawDone = true
			continue
		}
		if sawDone {
			t.Errorf("event after [DONE]: %s", d)
		}
		var m map[string]any
		if err := json.Unmarshal(d, &m); err != nil {
			t.Fatalf("chunk is not JSON: %v: %s", err, d)
		}
		out = append(out, m)
	}
	if sc.Err() != nil {
		t.Fatal(sc.Err())
	}
	if !sawDone {
		t.Error("no [DONE]")
	}
	return out
}

func TestChatStream(t *testing.T) {
	srv := httptest.NewServer(New(Config{TokensPerEvent: 3}).Handler())
	defer srv.Close()
	resp := post(t, srv.URL+"/v1/chat/completions",
		`{"model":"x","messages":[{"role":"user","content":"one two three four"}],"stream":true,"stream_options":{"include_usage":true},"max_tokens":7}`)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	ev := events(t, resp.Body)
	// role, three content events (3+3+1 tokens), finish, usage.
	if len(ev) != 6 {
		t.Fatalf("%d chunks, want 6: %v", len(ev), ev)
	}
	delta := func(i int) map[string]any {
		return ev[i]["choices"].([]any)[0].(map[string]any)["delta"].(map[string]any)
	}
	if diff := cmp.Diff(map[string]any{"role": "assistant", "content": ""}, delta(0)); diff != "" {
		t.Errorf("first chunk is not role-only:\n%s", diff)
	}
	words := 0
	for i := 1; i <= 3; i++ {
		words += workload.CountWords(delta(i)["content"].(string))
		if ev[i]["usage"] != nil || ev[i]["object"] != "chat.completion.chunk" || ev[i]["model"] != "mock" {
			t.Errorf("chunk %d: %v", i, ev[i])
		}
		if _, ok := ev[i]["usage"]; !ok {
			t.Errorf("chunk %d has no usage: null with include_usage", i)
		}
	}
	if words != 7 {
		t.Errorf("%d words of content, want 7", words)
	}
	if fr := ev[4]["choices"].([]any)[0].(map[string]any)["finish_reason"]; fr != "length" {
		t.Errorf("finish_reason %v, want length (max_tokens reached)", fr)
	}
	want := map[string]any{"prompt_tokens": 4.0, "completion_tokens": 7.0, "total_tokens": 11.0}
	if diff := cmp.Diff(want, ev[5]["usage"]); diff != "" || len(ev[5]["choices"].([]any)) != 0 {
		t.Errorf("usage chunk %v (-want +got):\n%s", ev[5], diff)
	}
}

func TestUsageOptions(t *testing.T) {
	tests := []struct {
		name   string
		cfg    Config
		body   string
		chunks int // chunks before [DONE]
	}{
		// No include_usage: no usage chunk, no usage field.
		{"not asked", Config{}, `{"model":"m","messages":[{"content":"a"}],"stream":true,"max_tokens":2}`, 4},
		// NoUsage ignores the option, as some servers do.
		{"ignored", Config{NoUsage: true}, `{"model":"m","messages":[{"content":"a"}],"stream":true,"max_tokens":2,"stream_options":{"include_usage":true}}`, 4},
		// Completions have no role chunk.
		{"completions", Config{}, `{"model":"m","prompt":"a b","stream":true,"max_tokens":2,"stream_options":{"include_usage":true}}`, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(New(tt.cfg).Handler())
			defer srv.Close()
			path := "/v1/chat/completions"
			if tt.name == "completions" {
				path = "/v1/completions"
			}
			ev := events(t, post(t, srv.URL+path, tt.body).Body)
			if len(ev) != tt.chunks {
				t.Fatalf("%d chunks, want %d: %v", len(ev), tt.chunks, ev)
			}
			for _, c := range ev {
				if _, has := c["usage"]; has != (tt.name == "completions") {
					t.Errorf("usage field present = %v in %v", has, c)
				}
			}
		})
	}
}

func TestWholeResponse(t *testing.T) {
	srv := httptest.NewServer(New(Config{OutputTokens: workload.Fixed(5), Model: "m"}).Handler())
	defer srv.Close()
	for _, path := range []string{"/v1/chat/completions", "/v1/completions"} {
		resp := post(t, srv.URL+path, `{"model":"m","messages":[{"content":"hi there"}],"prompt":"hi there"}`)
		var v struct {
			Choices []struct {
				Message      struct{ Role, Content string }
				Text         string
				FinishReason string `json:"finish_reason"`
			}
			Usage struct {
				PromptTokens     int `json:"prompt_tokens"`
				CompletionTokens int `json:"completion_tokens"`
			}
		}
		if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
			t.Fatal(err)
		}
		text := v.Choices[0].Message.Content + v.Choices[0].Text
		if workload.CountWords(text) != 5 || v.Usage.CompletionTokens != 5 || v.Usage.PromptTokens != 2 || v.Choices[0].FinishReason != "stop" {
			t.Errorf("%s: %+v", path, v)
		}
	}
}

func TestRejects(t *testing.T) {
	srv := httptest.NewServer(New(Config{Model: "m"}).Handler())
	defer srv.Close()
	tests := []struct {
		body   string
		status int
		msg    string
	}{
		{`{"model":"other","messages":[{"content":"a"}]}`, 404, "does not exist"},
		{`{"model":"m",`, 400, "not valid JSON"},
		{`{"model":"m"}`, 400, "messages is required"},
		{`{"model":"m","messages":[{"content":"a"}],"max_tokens":-1}`, 400, "must not be negative"},
	}
	for _, tt := range tests {
		resp := post(t, srv.URL+"/v1/chat/completions", tt.body)
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != tt.status || !strings.Contains(string(b), tt.msg) {
			t.Errorf("%s: %d %s, want %d %q", tt.body, resp.StatusCode, b, tt.status, tt.msg)
		}
	}
	resp, err := http.Get(srv.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var models struct{ Data []struct{ ID string } }
	if err := json.NewDecoder(resp.Body).Decode(&models); err != nil || len(models.Data) != 1 || models.Data[0].ID != "m" {
		t.Errorf("models: %+v %v", models, err)
	}
}

func TestDrawDeterministic(t *testing.T) {
	cfg := Config{
		Seed: 5, TTFT: workload.Dist{Kind: "normal", Mean: 50, Std: 10}, ITL: workload.Dist{Kind: "lognormal", Mean: 10, Std: 3},
		OutputTokens: workload.Dist{Kind: "uniform", Min: 1, Max: 100}, ErrorRate: 0.2, DisconnectRate: 0.2, ErrorEventRate: 0.2,
		StallRate: 0.2, Stall: time.Second,
	}
	a, b := New(cfg), New(cfg)
	cfg.Seed = 6
	c := New(cfg)
	faults := map[string]int{}
	same := 0
	for seq := uint64(1); seq <= 2000; seq++ {
		pa, pb, pc := a.draw(seq, 0, false), b.draw(seq, 0, false), c.draw(seq, 0, false)
		if diff := cmp.Diff(pa, pb, cmp.AllowUnexported(plan{})); diff != "" {
			t.Fatalf("same seed, request %d differs:\n%s", seq, diff)
		}
		if pa.ttft == pc.ttft {
			same++
		}
		if pa.errorState {
			faults["error"]++
		}
		faults[pa.fault]++
		if pa.tokens < 1 || pa.tokens > 100 || len(pa.gaps) != pa.events-1 {
			t.Fatalf("plan %+v", pa)
		}
	}
	if same > 20 {
		t.Errorf("different seeds gave %d equal TTFTs of 2000", same)
	}
	// Each fault near its rate (a disconnect excludes an error event, so that one is 0.8 * 0.2).
	for name, want := range map[string]float64{"error": 0.2, "disconnect": 0.2, "error_event": 0.16} {
		if got := float64(faults[name]) / 2000; got < want-0.04 || got > want+0.04 {
			t.Errorf("%s rate %.3f, want about %.2f (%v)", name, got, want, faults)
		}
	}
}

func TestEmitTiming(t *testing.T) {
	ms := New(Config{TTFT: workload.Fixed(30), ITL: workload.Fixed(10), OutputTokens: workload.Fixed(6), Record: 2})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, err := ms.Start(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		resp := post(t, base+"/chat/completions", `{"model":"m","messages":[{"content":"a"}],"stream":true}`)
		events(t, resp.Body)
	}
	em := ms.Emissions()
	if len(em) != 2 {
		t.Fatalf("%d emissions recorded, want the limit 2", len(em))
	}
	for _, e := range em {
		if len(e.Events) != 6 || e.OutputTokens != 6 || e.Fault != "" || e.Status != 200 {
			t.Fatalf("emission %+v", e)
		}
		if ttft := e.FirstToken.Sub(e.Received); ttft < 30*time.Millisecond {
			t.Errorf("TTFT %v, want at least 30ms", ttft)
		}
		for k := 1; k < len(e.Events); k++ {
			// Due times are absolute: event k is never before received + 30ms + k*10ms.
			if due := e.Received.Add(30*time.Millisecond + time.Duration(k)*10*time.Millisecond); e.Events[k].Before(due) {
				t.Errorf("event %d at %v, due %v", k, e.Events[k].Sub(e.Received), due.Sub(e.Received))
			}
		}
		if e.End.Before(e.Events[5]) {
			t.Errorf("end before the last event")
		}
	}
	// The record is also served as JSON.
	resp, err := http.Get(strings.TrimSuffix(base, "/v1") + "/debug/emits")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got []Emission
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || len(got) != 2 || len(got[0].Events) != 6 {
		t.Errorf("/debug/emits: %d emissions, %v", len(got), err)
	}
	if st := ms.Stats(); st.Requests != 3 || st.Completed != 3 || st.Events != 18 {
		t.Errorf("stats %+v", st)
	}
}

func TestStall(t *testing.T) {
	ms := New(Config{OutputTokens: workload.Fixed(4), StallRate: 1, Stall: 50 * time.Millisecond, Record: 1})
	srv := httptest.NewServer(ms.Handler())
	defer srv.Close()
	events(t, post(t, srv.URL+"/v1/chat/completions", `{"model":"m","messages":[{"content":"a"}],"stream":true}`).Body)
	e := ms.Emissions()[0]
	if d := e.End.Sub(e.Received); d < 50*time.Millisecond || e.Fault != "stall" {
		t.Errorf("stalled response took %v, fault %q", d, e.Fault)
	}
}

func TestServeStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	base, err := New(Config{}).Start(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	for i := 0; ; i++ {
		resp, err := http.Get(base + "/models")
		if err != nil {
			break
		}
		resp.Body.Close()
		if i == 100 {
			t.Fatal("server still answers after its context ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []Config{
		{ErrorRate: 1.5}, {DisconnectRate: -0.1}, {ErrorStatus: 200}, {TokensPerEvent: -1},
		{TTFT: workload.Dist{Kind: "weird"}},
	} {
		if c.Validate() == nil {
			t.Errorf("Validate(%+v) = nil", c)
		}
	}
	if err := (Config{ErrorRate: 0.5, ErrorStatus: 429}).Validate(); err != nil {
		t.Error(err)
	}
}

// Events with a gap between them are never written together, even when the schedule runs ahead
// of what the server's timers can keep (gaps of 20 µs, below the runtime's millisecond waits):
// each event has its own flush and stamp, and the stream's last chunk says none went together. Written by the schedule alone, the late events went out in
// pairs and runs, which a client reads as gaps of zero (itl_ms).
func TestGapsNeverTogether(t *testing.T) {
	const n = 40
	ms := New(Config{TTFT: workload.Fixed(1), ITL: workload.Fixed(0.02), OutputTokens: workload.Fixed(n), Record: 1})
	srv := httptest.NewServer(ms.Handler())
	defer srv.Close()
	ev := events(t, post(t, srv.URL+"/v1/chat/completions", `{"model":"m","messages":[{"content":"a"}],"stream":true}`).Body)
	e := ms.Emissions()[0]
	if len(e.Events) != n {
		t.Fatalf("%d events recorded, want %d", len(e.Events), n)
	}
	for k := 1; k < n; k++ {
		if !e.Events[k].After(e.Events[k-1]) {
			t.Errorf("event %d written with the one before", k)
		}
	}
	emit, _ := ev[len(ev)-1][EmitField].(map[string]any)
	if emit["together"] != 0.0 || emit["first_together"] != false {
		t.Errorf("%s = %v, want nothing written together", EmitField, emit)
	}
}
