// Package wire holds what the provider adapters share about HTTP: mapping
// statuses and transport failures to model error classes, reading
// Retry-After, capturing response headers the SDKs hide, adding headers,
// and keeping API keys out of error text.
package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
)

// ClassOfStatus maps an HTTP status to a retry class; overflow says the
// body described a prompt too long for the model's context window.
func ClassOfStatus(status int, overflow bool) model.Class {
	switch {
	case overflow:
		return model.ClassContextOverflow
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return model.ClassAuth
	case status == http.StatusTooManyRequests:
		return model.ClassRateLimited
	case status == http.StatusRequestTimeout:
		return model.ClassTimeout
	case status == http.StatusRequestEntityTooLarge:
		return model.ClassContextOverflow
	case status >= 500:
		return model.ClassServer
	}
	return model.ClassRequest
}

// LooksLikeOverflow reports whether an error message or code says the
// prompt does not fit the model's context window.
func LooksLikeOverflow(s string) bool {
	s = strings.ToLower(s)
	for _, m := range []string{"context_length_exceeded", "prompt is too long", "maximum context length", "context window", "too many tokens", "context length"} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// ClassOfErr classifies a failure without an HTTP status: the caller's
// deadline, a network timeout, undecodable data, or any other transport
// failure (including a stream cut mid-way).
func ClassOfErr(ctx context.Context, err error) model.Class {
	var ne net.Error
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case ctx.Err() != nil, errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return model.ClassTimeout
	case errors.As(err, &se), errors.As(err, &te):
		return model.ClassMalformed
	case errors.As(err, &ne) && ne.Timeout():
		return model.ClassTimeout
	}
	return model.ClassTransport
}

// RetryAfter reads Retry-After (seconds or an HTTP date) or the
// retry-after-ms extension; 0 when absent or unparsable.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if ms := h.Get("Retry-After-Ms"); ms != "" {
		if f, err := strconv.ParseFloat(ms, 64); err == nil && f > 0 {
			return time.Duration(f * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		if f <= 0 {
			return 0
		}
		return time.Duration(f * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// Redact removes every occurrence of the secrets from s.
func Redact(s string, secrets ...string) string {
	for _, k := range secrets {
		if k != "" {
			s = strings.ReplaceAll(s, k, "[redacted]")
		}
	}
	return s
}

// RedactedError is an error whose text has had secrets removed; it keeps
// the original for errors.Is/As.
type RedactedError struct {
	Msg string
	Err error
}

func (e *RedactedError) Error() string { return e.Msg }
func (e *RedactedError) Unwrap() error { return e.Err }

// Redacted wraps err so its text carries none of the secrets.
func Redacted(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	return &RedactedError{Msg: Redact(err.Error(), secrets...), Err: err}
}

// Captured holds the status and headers of the last response a request
// made with a CaptureContext received.
type Captured struct {
	Status int
	Header http.Header
}

type captureKey struct{}

// CaptureContext returns a context under which Transport records the
// response status and headers into c.
func CaptureContext(ctx context.Context, c *Captured) context.Context {
	return context.WithValue(ctx, captureKey{}, c)
}

type extraKey struct{}

// WithExtraFields returns a context under which Transport adds the given
// top-level fields to a JSON request body (for API extensions an SDK has
// no field for, such as OpenRouter's cache_control).
func WithExtraFields(ctx context.Context, fields map[string]json.RawMessage) context.Context {
	return context.WithValue(ctx, extraKey{}, fields)
}

// addFields rewrites a JSON object body with extra top-level fields.
func addFields(req *http.Request, fields map[string]json.RawMessage) (*http.Request, error) {
	if req.Body == nil {
		return req, nil
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("read request body: %w", err)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		return nil, fmt.Errorf("add fields to request body: %w", err)
	}
	for k, v := range fields {
		obj[k] = v
	}
	if body, err = json.Marshal(obj); err != nil {
		return nil, fmt.Errorf("encode request body: %w", err)
	}
	req = req.Clone(req.Context())
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return req, nil
}

// Transport adds fixed headers to every request, extra body fields under
// WithExtraFields, and records responses for CaptureContext.
type Transport struct {
	Base    http.RoundTripper
	Headers map[string]string
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.Headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range t.Headers {
			req.Header.Set(k, v)
		}
	}
	if fields, ok := req.Context().Value(extraKey{}).(map[string]json.RawMessage); ok && len(fields) > 0 {
		var err error
		if req, err = addFields(req, fields); err != nil {
			return nil, err
		}
	}
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if c, ok := req.Context().Value(captureKey{}).(*Captured); ok && resp != nil {
		c.Status = resp.StatusCode
		c.Header = resp.Header.Clone()
	}
	if r, ok := req.Context().Value(costKey{}).(*ReportedCost); ok && resp != nil && resp.StatusCode == http.StatusOK && resp.Body != nil {
		resp.Body = &costTap{body: resp.Body, r: r}
	}
	return resp, err
}

// Client returns an HTTP client like base (or a default one) whose
// transport is wrapped by Transport with the given headers.
func Client(base *http.Client, headers map[string]string) *http.Client {
	c := &http.Client{}
	if base != nil {
		*c = *base
	}
	c.Transport = &Transport{Base: c.Transport, Headers: headers}
	return c
}
