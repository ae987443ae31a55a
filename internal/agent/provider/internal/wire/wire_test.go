package wire

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header http.Header
		want   time.Duration
	}{
		{"absent", http.Header{}, 0},
		{"seconds", http.Header{"Retry-After": {"7"}}, 7 * time.Second},
		{"fractional seconds", http.Header{"Retry-After": {"1.5"}}, 1500 * time.Millisecond},
		{"http date", http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second},
		{"date in the past", http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, 0},
		{"milliseconds extension wins", http.Header{"Retry-After": {"7"}, "Retry-After-Ms": {"250"}}, 250 * time.Millisecond},
		{"garbage", http.Header{"Retry-After": {"soon"}}, 0},
		{"negative", http.Header{"Retry-After": {"-3"}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RetryAfter(tt.header, now); got != tt.want {
				t.Errorf("RetryAfter = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestClassOfStatus(t *testing.T) {
	tests := []struct {
		status   int
		overflow bool
		want     model.Class
	}{
		{401, false, model.ClassAuth},
		{403, false, model.ClassAuth},
		{429, false, model.ClassRateLimited},
		{408, false, model.ClassTimeout},
		{413, false, model.ClassContextOverflow},
		{400, true, model.ClassContextOverflow},
		{400, false, model.ClassRequest},
		{404, false, model.ClassRequest},
		{500, false, model.ClassServer},
		{529, false, model.ClassServer},
	}
	for _, tt := range tests {
		if got := ClassOfStatus(tt.status, tt.overflow); got != tt.want {
			t.Errorf("ClassOfStatus(%d, %v) = %s, want %s", tt.status, tt.overflow, got, tt.want)
		}
	}
}

func TestClassOfErr(t *testing.T) {
	var syntax error = &json.SyntaxError{}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want model.Class
	}{
		{"cancelled context", done, errors.New("read: closed"), model.ClassTimeout},
		{"deadline", context.Background(), context.DeadlineExceeded, model.ClassTimeout},
		{"bad json", context.Background(), syntax, model.ClassMalformed},
		{"anything else", context.Background(), errors.New("connection reset by peer"), model.ClassTransport},
	}
	for _, tt := range tests {
		if got := ClassOfErr(tt.ctx, tt.err); got != tt.want {
			t.Errorf("%s: ClassOfErr = %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestRedacted(t *testing.T) {
	err := Redacted(errors.New("bad key sk-123 (sk-123)"), "sk-123", "")
	if got := err.Error(); got != "bad key [redacted] ([redacted])" {
		t.Errorf("Redacted = %q", got)
	}
	if errors.Unwrap(err) == nil {
		t.Error("Redacted lost the original error")
	}
}
