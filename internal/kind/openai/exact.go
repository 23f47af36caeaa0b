package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/inferbench/inferbench/internal/workload"
)

// exactFields are the request fields each known server takes to generate exactly max_tokens,
// by the owned_by its /v1/models lists: ignore_eos, and min_tokens at max_tokens.
var exactFields = map[string]struct{ ignoreEOS, minTokens bool }{
	"vllm":       {true, true},
	"sglang":     {true, false},
	"llamacpp":   {true, false},
	"inferbench": {true, true}, // the mockserver
}

// exactLengths decides whether requests ask for exactly their output length. max_tokens is a
// ceiling: a model that reaches its end-of-sequence token stops before it, and a run then
// measures shorter answers than its workload asked. Where the server's API has a way, requests
// ask for the exact length by default:
//   - a server whose /v1/models names it in owned_by (vLLM, SGLang, llama.cpp, the mockserver)
//     gets the fields it takes (exactFields);
//   - another server that lists its models is sent one one-token request with ignore_eos and
//     min_tokens; when it refuses them (HTTP 400 or 422) the request is sent again without, and
//     the run's requests ask for max_tokens alone, which run.json's environment notes
//     (exact_output), as it notes every decision;
//   - a server with no /v1/models is sent neither.
//
// Config.IgnoreEOS set decides instead. Only a server that fails the request without the
// fields too is an error.
func (s *Subject) exactLengths(ctx context.Context, base *url.URL) error {
	if s.cfg.IgnoreEOS != nil {
		s.ignoreEOS, s.minTokens = *s.cfg.IgnoreEOS, *s.cfg.IgnoreEOS
		s.exact = "ignore_eos and min_tokens (ignore_eos: true)"
		if !*s.cfg.IgnoreEOS {
			s.exact = "max_tokens only (ignore_eos: false)"
		}
		return s.rebuildHead()
	}
	owner, err := s.ownedBy(ctx, base)
	if err != nil {
		if err := s.stalled(ctx, err, "GET "+base.String()+"/models"); err != nil {
			return err
		}
		s.exact = fmt.Sprintf("max_tokens only: the server's model list says nothing of its API (%v)", err)
		return nil
	}
	if f, ok := exactFields[strings.ToLower(owner)]; ok {
		s.ignoreEOS, s.minTokens = f.ignoreEOS, f.minTokens
		s.exact = fmt.Sprintf("%s (/v1/models: owned_by %q)", fieldNames(f.ignoreEOS, f.minTokens), owner)
		return s.rebuildHead()
	}
	s.ignoreEOS, s.minTokens = true, true
	if err := s.rebuildHead(); err != nil {
		return err
	}
	code, msg, err := s.probe(ctx)
	switch {
	case err != nil:
		return s.probeError(ctx, err)
	case code/100 == 2:
		s.exact = fmt.Sprintf("ignore_eos and min_tokens (owned_by %q: a one-token request with them was answered)", owner)
		return nil
	}
	s.ignoreEOS, s.minTokens = false, false
	if err := s.rebuildHead(); err != nil {
		return err
	}
	if code != http.StatusBadRequest && code != http.StatusUnprocessableEntity {
		s.exact = fmt.Sprintf("max_tokens only (owned_by %q: a one-token request with ignore_eos and min_tokens got HTTP %d: %s)", owner, code, msg)
		return nil
	}
	code2, msg2, err := s.probe(ctx)
	if err != nil {
		return s.probeError(ctx, err)
	}
	if code2/100 != 2 {
		return fmt.Errorf("openai: a one-token request to %s got HTTP %d without ignore_eos and min_tokens too: %s (check the model name and the endpoint)", s.endpoint, code2, msg2)
	}
	s.exact = fmt.Sprintf("max_tokens only: the server refused ignore_eos and min_tokens (HTTP %d: %s); answers may stop short (output_short_rate)", code, msg)
	return nil
}

// stalled returns the error of a probe (what) that err ended at its own deadline (probeWait),
// and nil for another error: a server that does not answer the probe in the run's timeout would
// not answer the run's requests either.
func (s *Subject) stalled(ctx context.Context, err error, what string) error {
	if !errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("openai: the exact-output probe's %s got no answer within %v, %s: is the server stalled? %w", what, s.probeWait, s.probeFrom, err)
}

// probeError is the error of the exact-output probe's one-token request.
func (s *Subject) probeError(ctx context.Context, err error) error {
	if e := s.stalled(ctx, err, "one-token request to "+s.endpoint); e != nil {
		return e
	}
	return fmt.Errorf("openai: the exact-output probe's one-token request to %s: %w", s.endpoint, err)
}

func fieldNames(ignoreEOS, minTokens bool) string {
	switch {
	case ignoreEOS && minTokens:
		return "ignore_eos and min_tokens"
	case ignoreEOS:
		return "ignore_eos"
	case minTokens:
		return "min_tokens"
	}
	return "max_tokens only"
}

func (s *Subject) rebuildHead() error {
	h, err := s.bodyHead()
	s.head = h
	return err
}

// ownedBy returns the owned_by of the model in the server's /v1/models (of its first model when
// none has the name), asked within probeWait.
func (s *Subject) ownedBy(ctx context.Context, base *url.URL) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.probeWait)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base.String()+"/models", nil)
	if err != nil {
		return "", err
	}
	s.headers(req)
	resp, err := s.client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET /models: HTTP %d", resp.StatusCode)
	}
	var list struct {
		Data []struct {
			ID      string `json:"id"`
			OwnedBy string `json:"owned_by"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &list); err != nil || len(list.Data) == 0 {
		return "", fmt.Errorf("GET /models: no model list")
	}
	for _, m := range list.Data {
		if m.ID == s.cfg.Model {
			return m.OwnedBy, nil
		}
	}
	return list.Data[0].OwnedBy, nil
}

// probe sends one one-token request as the run's are built and returns its status, within
// probeWait.
func (s *Subject) probe(ctx context.Context) (int, string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.probeWait)
	defer cancel()
	body, err := s.appendBody(nil, workload.Prompt{Text: "hello", OutputTokens: 1})
	if err != nil {
		return 0, "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.endpoint, bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	s.headers(req)
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 == 2 {
		return resp.StatusCode, "", nil
	}
	return resp.StatusCode, errorMessage(b), nil
}

// headers sets the authorization and the configured headers of a request.
func (s *Subject) headers(req *http.Request) {
	if s.auth != "" {
		req.Header.Set("Authorization", s.auth)
	}
	for k, v := range s.cfg.Headers {
		req.Header.Set(k, v)
	}
}
