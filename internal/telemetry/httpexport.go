package telemetry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Export limits. An export that the collector keeps refusing with
// 429/502/503/504 (or that cannot connect) is tried again after the
// collector's Retry-After, else after a doubling pause, for at most
// exportAttempts tries, all within exportTimeout.
const (
	exportTimeout  = 10 * time.Second
	exportAttempts = 4
	firstBackoff   = 250 * time.Millisecond
	maxRetryWait   = 5 * time.Second
	maxReplyBytes  = 64 << 10
)

var errExporterShutdown = errors.New("telemetry: otlp exporter is shut down")

// httpExporter is an sdktrace.SpanExporter that posts spans to an
// OTLP/HTTP collector as binary protobuf. Its errors name HTTP statuses
// and counts, never a span's attributes or the collector's reply text.
type httpExporter struct {
	url     string
	client  *http.Client
	stopped atomic.Bool
}

var _ sdktrace.SpanExporter = (*httpExporter)(nil)

func newHTTPExporter(tracesURL string) *httpExporter {
	var rt http.RoundTripper = http.DefaultTransport
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		rt = t.Clone()
	}
	return &httpExporter{url: tracesURL, client: &http.Client{Transport: rt, Timeout: exportTimeout}}
}

// ExportSpans posts one batch, trying again while the collector says it
// is busy or cannot be reached.
func (x *httpExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if x.stopped.Load() {
		return errExporterShutdown
	}
	if len(spans) == 0 {
		return nil
	}
	body := exportRequest(spans)
	ctx, cancel := context.WithTimeout(ctx, exportTimeout)
	defer cancel()
	backoff := firstBackoff
	for attempt := 1; ; attempt++ {
		wait, err := x.post(ctx, body, len(spans))
		if err == nil {
			return nil
		}
		if wait < 0 || attempt == exportAttempts {
			return err
		}
		if wait == 0 {
			wait = backoff
			backoff *= 2
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return fmt.Errorf("%w (no time left to retry after %s)", err, wait)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (gave up: %w)", err, ctx.Err())
		case <-t.C:
		}
	}
}

// post sends the request once. On failure wait says what to do next:
// negative, give up; zero, retry after the exporter's own backoff;
// positive, retry after that long (the collector's Retry-After).
func (x *httpExporter) post(ctx context.Context, body []byte, n int) (wait time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, x.url, bytes.NewReader(body))
	if err != nil {
		return -1, fmt.Errorf("telemetry: otlp request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("User-Agent", "ioh-lsp")
	resp, err := x.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return -1, fmt.Errorf("telemetry: export %d spans: %w", n, err)
		}
		return 0, fmt.Errorf("telemetry: export %d spans: %w", n, err)
	}
	reply, rerr := io.ReadAll(io.LimitReader(resp.Body, maxReplyBytes))
	io.Copy(io.Discard, io.LimitReader(resp.Body, maxReplyBytes)) // lets the connection be reused
	resp.Body.Close()
	switch code := resp.StatusCode; {
	case code >= 200 && code < 300:
		if rerr != nil {
			return 0, nil // the spans were accepted; the reply is only advisory
		}
		if rejected := rejectedSpans(reply, resp.Header.Get("Content-Type")); rejected > 0 {
			return -1, fmt.Errorf("telemetry: the collector rejected %d of %d spans", rejected, n)
		}
		return 0, nil
	case code == http.StatusTooManyRequests || code == http.StatusBadGateway ||
		code == http.StatusServiceUnavailable || code == http.StatusGatewayTimeout:
		return retryAfter(resp.Header.Get("Retry-After"), time.Now()),
			fmt.Errorf("telemetry: export %d spans: collector answered %s", n, resp.Status)
	default:
		return -1, fmt.Errorf("telemetry: export %d spans: collector answered %s", n, resp.Status)
	}
}

// retryAfter reads a Retry-After header (delay seconds or an HTTP date),
// capped at maxRetryWait; zero when absent or unreadable.
func retryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	var d time.Duration
	if secs, err := strconv.ParseInt(h, 10, 64); err == nil {
		if secs < 0 {
			return 0
		}
		if secs > int64(maxRetryWait/time.Second) {
			return maxRetryWait
		}
		d = time.Duration(secs) * time.Second
	} else if at, err := http.ParseTime(h); err == nil {
		d = at.Sub(now)
	} else {
		return 0
	}
	switch {
	case d <= 0:
		return time.Millisecond // the collector is ready again: retry at once
	case d > maxRetryWait:
		return maxRetryWait
	}
	return d
}

// rejectedSpans reads ExportTraceServiceResponse.partial_success
// (field 1).rejected_spans (field 1) from a protobuf reply; 0 when the
// reply is empty, not protobuf, or says nothing was rejected.
func rejectedSpans(reply []byte, contentType string) int64 {
	if len(reply) == 0 || !strings.HasPrefix(contentType, "application/x-protobuf") {
		return 0
	}
	partial, ok := field(reply, 1, wireBytes)
	if !ok {
		return 0
	}
	v, ok := field(partial, 1, wireVarint)
	if !ok {
		return 0
	}
	n, _ := consumeVarint(v)
	return int64(n)
}

// Shutdown stops the exporter: later exports fail at once. Spans still
// queued are the batch processor's to flush before it calls this.
func (x *httpExporter) Shutdown(ctx context.Context) error {
	x.stopped.Store(true)
	x.client.CloseIdleConnections()
	return nil
}
