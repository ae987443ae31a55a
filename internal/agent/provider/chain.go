package provider

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
)

// RetryInfo describes one failed attempt and what the chain does next.
type RetryInfo struct {
	Provider string        // who failed
	Model    string        // with which model
	Attempt  int           // 1-based attempt on this provider
	Class    model.Class   // the failure's class
	Err      error         // the failure (API keys already removed)
	Delay    time.Duration // the wait before the next attempt; 0 when moving on
	// Next names the fallback provider tried next ("" when the same
	// provider is retried).
	Next string
}

// Link is one provider of a chain with the model it is asked for.
type Link struct {
	Provider model.Provider
	Model    string
}

// Chain retries each provider with exponential backoff and full jitter,
// honouring Retry-After (capped by retry.cap) and never sleeping past the
// context deadline, then falls back to the next provider. Failures of class
// auth and request are not retried but do move on to the next provider (it
// has other credentials and other models); context_overflow and exhausted
// are returned at once: the caller compacts, or the cassette is done.
type Chain struct {
	links   []Link
	retry   contract.Retry
	onRetry func(RetryInfo)
	sleep   func(ctx context.Context, d time.Duration) error
	jitter  func() float64
}

// NewChain returns a chain over links (at least one).
func NewChain(links []Link, retry contract.Retry, onRetry func(RetryInfo)) *Chain {
	return &Chain{links: links, retry: retry, onRetry: onRetry, sleep: sleepCtx, jitter: rand.Float64}
}

// Name implements model.Provider: the primary provider's name.
func (c *Chain) Name() string { return c.links[0].Provider.Name() }

// Targets implements model.Targeter: each link's provider and model, in
// the order the chain tries them.
func (c *Chain) Targets() []model.Target {
	out := make([]model.Target, len(c.links))
	for i, l := range c.links {
		out[i] = model.Target{Provider: l.Provider.Name(), Model: l.Model, ReportsCost: model.ReportsCost(l.Provider)}
	}
	return out
}

// IsContextOverflow reports whether err says the transcript no longer fits
// the model: the caller should compact it and try once more.
func IsContextOverflow(err error) bool {
	var e *model.Error
	return errors.As(err, &e) && e.Class == model.ClassContextOverflow
}

// Complete implements model.Provider.
func (c *Chain) Complete(ctx context.Context, req *model.Request) (*model.Response, error) {
	var last error
	for li, link := range c.links {
		r := *req
		if link.Model != "" {
			r.Model = link.Model
		}
		next := ""
		if li+1 < len(c.links) {
			next = c.links[li+1].Provider.Name()
		}
		for attempt := 1; ; attempt++ {
			resp, err := link.Provider.Complete(ctx, &r)
			if err == nil {
				if resp.Provider == "" {
					resp.Provider = link.Provider.Name()
				}
				if resp.Model == "" {
					resp.Model = r.Model
				}
				return resp, nil
			}
			last = err
			class := model.ClassOf(err)
			if ctx.Err() != nil {
				return nil, err
			}
			if class == model.ClassContextOverflow || class == model.ClassExhausted {
				return nil, err
			}
			info := RetryInfo{Provider: link.Provider.Name(), Model: r.Model, Attempt: attempt, Class: class, Err: err}
			// A failure nothing follows (no retry, no fallback) is the
			// call's error, not a retry: it is not reported.
			if !class.Retryable() || attempt > c.retry.Max {
				c.moveOn(info, next)
				break
			}
			delay := c.backoff(attempt, err)
			if dl, ok := ctx.Deadline(); ok && time.Now().Add(delay).After(dl) {
				// Waiting would pass the wall budget: move on instead.
				c.moveOn(info, next)
				break
			}
			info.Delay = delay
			c.notify(info)
			if err := c.sleep(ctx, delay); err != nil {
				return nil, fmt.Errorf("wait to retry %s: %w", link.Provider.Name(), errors.Join(err, last))
			}
		}
	}
	return nil, last
}

// moveOn reports that the call goes on to the next link, when there is
// one.
func (c *Chain) moveOn(info RetryInfo, next string) {
	if next != "" {
		info.Next = next
		c.notify(info)
	}
}

func (c *Chain) notify(info RetryInfo) {
	if c.onRetry != nil {
		c.onRetry(info)
	}
}

// backoff is full jitter over base·2^(attempt-1), raised to Retry-After
// when the server asked for longer, and capped by retry.cap.
func (c *Chain) backoff(attempt int, err error) time.Duration {
	exp := c.retry.Base
	for i := 1; i < attempt && exp < c.retry.Cap; i++ {
		exp *= 2
	}
	if c.retry.Cap > 0 && exp > c.retry.Cap {
		exp = c.retry.Cap
	}
	d := time.Duration(c.jitter() * float64(exp))
	var me *model.Error
	if errors.As(err, &me) && me.RetryAfter > d {
		d = me.RetryAfter
	}
	if c.retry.Cap > 0 && d > c.retry.Cap {
		d = c.retry.Cap
	}
	return d
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
