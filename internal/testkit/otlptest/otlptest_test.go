package otlptest

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// TestReceiver: an export request's spans are kept and answered with an
// ExportTraceServiceResponse; a request of the wrong content type gets 400, keeps nothing, and
// is still recorded.
func TestReceiver(t *testing.T) {
	rc, url := Start(t)
	req := &collectortrace.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{
		{ScopeSpans: []*tracepb.ScopeSpans{
			{Spans: []*tracepb.Span{{Name: "b"}, {Name: "a"}}},
			{Spans: []*tracepb.Span{{Name: "b"}}},
		}},
	}}
	body, err := proto.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	post := func(contentType string, body []byte) (int, []byte) {
		t.Helper()
		resp, err := http.Post(url+"/v1/traces", contentType, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, b
	}

	code, answer := post("application/x-protobuf", body)
	if code != http.StatusOK {
		t.Fatalf("export: status %d %s", code, answer)
	}
	if err := proto.Unmarshal(answer, &collectortrace.ExportTraceServiceResponse{}); err != nil {
		t.Errorf("export: answer %q is no ExportTraceServiceResponse: %v", answer, err)
	}
	if code, answer := post("application/json", []byte(`{}`)); code != http.StatusBadRequest {
		t.Errorf("JSON export: status %d %s, want 400", code, answer)
	}
	resp, err := http.Get(url + "/v1/traces")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("GET: status %d, want 400", resp.StatusCode)
	}

	var names []string
	for _, s := range rc.Spans() {
		names = append(names, s.Name)
	}
	if diff := cmp.Diff([]string{"b", "a", "b"}, names); diff != "" {
		t.Errorf("Spans (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "b"}, rc.Names()); diff != "" {
		t.Errorf("Names (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"POST /v1/traces", "POST /v1/traces", "GET /v1/traces"}, rc.Requests()); diff != "" {
		t.Errorf("Requests (-want +got):\n%s", diff)
	}
	rc.Spans()[0] = nil // a copy: the receiver's list is untouched
	if rc.Spans()[0] == nil {
		t.Error("Spans returned the receiver's own list")
	}
}
