package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
)

// StatusError is an error answer from the server.
type StatusError struct {
	Code    int    // HTTP status
	Message string // the server's message, when it gave one
}

func (e *StatusError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("HTTP %d %s", e.Code, http.StatusText(e.Code))
	}
	return fmt.Sprintf("HTTP %d: %s", e.Code, e.Message)
}

// StatusCode returns the HTTP status, so results can count errors by status.
func (e *StatusError) StatusCode() int { return e.Code }

// Errors of a stream that started well and ended badly. Returned errors wrap one of them.
var (
	ErrMalformed  = errors.New("malformed stream")               // an event that is not a valid chunk
	ErrIncomplete = errors.New("stream ended before [DONE]")     // the server closed or cut the stream
	ErrStream     = errors.New("server reported a stream error") // an error event in the stream
	// ErrTooLarge is a whole (not streamed) response body over max_response_bytes, or the
	// bodies being read at once over their shared bound.
	ErrTooLarge = errors.New("response too large")
)

// Error is a failed request.
type Error struct{ Err error }

func (e *Error) Error() string { return "openai: " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Kind names the error's class: "http_503", "timeout", "connection", "malformed_stream",
// "incomplete_stream", "stream_error", "response_too_large", "canceled" or "error". Results count errors by kind.
func (e *Error) Kind() string {
	var se *StatusError
	var ne net.Error
	switch {
	case errors.As(e.Err, &se):
		return fmt.Sprintf("http_%d", se.Code)
	case errors.Is(e.Err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(e.Err, context.Canceled):
		return "canceled"
	case errors.Is(e.Err, ErrMalformed):
		return "malformed_stream"
	case errors.Is(e.Err, ErrIncomplete):
		return "incomplete_stream"
	case errors.Is(e.Err, ErrStream):
		return "stream_error"
	case errors.Is(e.Err, ErrTooLarge):
		return "response_too_large"
	case errors.As(e.Err, &ne):
		return "connection"
	}
	return "error"
}

// statusError reads the server's message from an error answer.
func statusError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return &StatusError{Code: resp.StatusCode, Message: errorMessage(b)}
}

// errorMessage finds the message in an OpenAI-style error body ({"error": {"message": ...}},
// {"error": "..."}, {"message": ...}, {"detail": ...}), or returns the text itself, shortened.
func errorMessage(b []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  any             `json:"detail"`
	}
	if json.Unmarshal(b, &v) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		var str string
		switch {
		case json.Unmarshal(v.Error, &inner) == nil && inner.Message != "":
			return inner.Message
		case json.Unmarshal(v.Error, &str) == nil && str != "":
			return str
		case v.Message != "":
			return v.Message
		case v.Detail != nil:
			return fmt.Sprint(v.Detail)
		}
	}
	msg := strings.TrimSpace(string(b))
	if len(msg) > 200 {
		msg = msg[:200] + "..."
	}
	return msg
}
