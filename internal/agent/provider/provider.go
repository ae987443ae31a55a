// Package provider builds the model.Provider a run talks to from the
// contract's model section: the Anthropic, OpenAI, OpenRouter,
// OpenAI-compatible and replay adapters, wrapped in a Chain that retries
// with backoff and falls back, and optionally in a Recorder that writes
// every turn to a cassette (`run --record FILE`).
package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/provider/anthropic"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/provider/internal/wire"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/provider/openai"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/provider/replay"
)

// Provider kinds (contract model.provider values).
const (
	KindAnthropic        = "anthropic"
	KindOpenAI           = "openai"
	KindOpenRouter       = "openrouter"
	KindOpenAICompatible = "openai-compatible"
	KindReplay           = "replay"
)

// DefaultModels is the model asked for when a contract names a provider
// but no model.
var DefaultModels = map[string]string{
	KindAnthropic:  "claude-sonnet-4-6",
	KindOpenAI:     "gpt-5",
	KindOpenRouter: "anthropic/claude-sonnet-4.6",
}

// DefaultKeyEnv is the variable holding each provider's API key when
// api_key_env is not set. openai-compatible servers use no key by default:
// sending the OpenAI key to an arbitrary server would leak it.
var DefaultKeyEnv = map[string]string{
	KindAnthropic:  "ANTHROPIC_API_KEY",
	KindOpenAI:     "OPENAI_API_KEY",
	KindOpenRouter: "OPENROUTER_API_KEY",
}

// OpenRouterHeaders attribute requests to ioh-lsp on OpenRouter.
var OpenRouterHeaders = map[string]string{
	"HTTP-Referer": "https://github.com/ioh-lsp/ioh-lsp",
	"X-Title":      "ioh-lsp",
}

// Options are the process-level inputs of New.
type Options struct {
	// Getenv reads API keys; default os.Getenv.
	Getenv func(string) string
	// HTTPClient is the base client for HTTP providers; default a plain one.
	HTTPClient *http.Client
	// OnRetry is told about every failed attempt another follows (a
	// retry after Delay, or the fallback Next), for the trace; the last
	// failure is the call's error, not a retry.
	OnRetry func(RetryInfo)
	// Record, when set, records every turn into this cassette file.
	Record string
	// Sleep replaces the backoff wait (tests); nil sleeps on a timer that
	// ends early when the context does.
	Sleep func(ctx context.Context, d time.Duration) error
	// Notice, when set, is told what New chose that nobody asked for (a
	// provider picked from the key in the environment).
	Notice func(string)
	// FirstByteTimeout bounds the wait for a response to start and
	// IdleTimeout each wait for more of a stream (model.first_byte_timeout,
	// model.idle_timeout); zero is the default. A provider that stalls
	// fails that attempt with class timeout, which the chain retries.
	FirstByteTimeout, IdleTimeout time.Duration
}

// Default stall bounds of a provider call (docs/cli.md#timeouts).
const (
	DefaultFirstByteTimeout = 60 * time.Second
	DefaultIdleTimeout      = 60 * time.Second
)

// watched returns o with its HTTP client's transport under a Watchdog.
func (o Options) watched() Options {
	c := &http.Client{}
	if o.HTTPClient != nil {
		*c = *o.HTTPClient
	}
	first, idle := o.FirstByteTimeout, o.IdleTimeout
	if first <= 0 {
		first = DefaultFirstByteTimeout
	}
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	c.Transport = &wire.Watchdog{Base: c.Transport, FirstByte: first, Idle: idle}
	o.HTTPClient = c
	return o
}

// ErrNoProvider is returned when nothing names a provider, no provider's
// key is in the environment and there is no cassette to replay.
var ErrNoProvider = errors.New("no model provider configured: set model.provider (anthropic, openai, openrouter, openai-compatible) in the user config ~/.config/ioh/config.yaml, " +
	"or export ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENROUTER_API_KEY to use that provider, or give --cassette FILE to replay one")

// envOrder is the order FromEnv prefers providers in when several keys
// are set.
var envOrder = []string{KindAnthropic, KindOpenAI, KindOpenRouter}

// FromEnv is the provider whose API key variable is set (the first of
// anthropic, openai, openrouter) and that variable; "" when none is.
func FromEnv(getenv func(string) string) (kind, env string) {
	for _, k := range envOrder {
		if getenv(DefaultKeyEnv[k]) != "" {
			return k, DefaultKeyEnv[k]
		}
	}
	return "", ""
}

// New builds the provider for spec: the primary and each fallback, in a
// Chain configured by retry, recorded when o.Record is set. A missing API
// key is not an error here: that provider fails with class auth when
// called, so the chain can fall back to one whose key is set.
func New(spec contract.Model, retry contract.Retry, o Options) (model.Provider, error) {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	o = o.watched()
	primary := contract.Fallback{Provider: spec.Provider, Name: spec.Name, BaseURL: spec.BaseURL, APIKeyEnv: spec.APIKeyEnv}
	if primary.Provider == "" {
		switch kind, env := FromEnv(o.Getenv); {
		case spec.Cassette != "":
			primary.Provider = KindReplay
		case kind != "":
			// Nothing chose a provider: the key present picks it, as
			// other agent CLIs do, and the run says so.
			primary.Provider = kind
			if o.Notice != nil {
				o.Notice(fmt.Sprintf("no model provider configured: using %s (%s) because %s is set; choose one with model.provider in the user config ~/.config/ioh/config.yaml", kind, DefaultModels[kind], env))
			}
		default:
			return nil, ErrNoProvider
		}
	}
	var links []Link
	for i, f := range append([]contract.Fallback{primary}, spec.Fallback...) {
		cassette := ""
		if i == 0 {
			cassette = spec.Cassette
		}
		p, name, err := build(f, cassette, o)
		if err != nil {
			if i > 0 {
				return nil, fmt.Errorf("fallback %d: %w", i, err)
			}
			return nil, err
		}
		links = append(links, Link{Provider: p, Model: name})
	}
	if err := allKeysMissing(links); err != nil {
		return nil, err
	}
	chain := NewChain(links, retry, o.OnRetry)
	if o.Sleep != nil {
		chain.sleep = o.Sleep
	}
	if o.Record != "" {
		// Fail before the first (paid) model call, not after it.
		if fi, err := os.Stat(filepath.Dir(o.Record)); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("record cassette %s: directory %s does not exist", o.Record, filepath.Dir(o.Record))
		}
		return NewRecorder(chain, o.Record), nil
	}
	return chain, nil
}

// build makes one adapter; it returns the model name to ask it for.
func build(f contract.Fallback, cassette string, o Options) (model.Provider, string, error) {
	name := f.Name
	if name == "" {
		name = DefaultModels[f.Provider]
	}
	if f.Provider == KindReplay {
		if cassette == "" {
			return nil, "", errors.New("replay needs model.cassette")
		}
		c, err := replay.Load(cassette)
		if err != nil {
			return nil, "", err
		}
		return replay.New(c), model.ReplayModel, nil
	}
	envName := f.APIKeyEnv
	if envName == "" {
		envName = DefaultKeyEnv[f.Provider]
	}
	if envName != "" && !strings.HasSuffix(envName, "_API_KEY") && !strings.HasSuffix(envName, "_TOKEN") {
		return nil, "", fmt.Errorf("%s: api_key_env %q must end in _API_KEY or _TOKEN", f.Provider, envName)
	}
	key := ""
	if envName != "" {
		key = o.Getenv(envName)
		if key == "" {
			return missingKey{kind: f.Provider, env: envName}, name, nil
		}
	}
	switch f.Provider {
	case KindAnthropic:
		return anthropic.New(anthropic.Config{APIKey: key, BaseURL: f.BaseURL, Model: name, HTTPClient: o.HTTPClient}), name, nil
	case KindOpenAI:
		return openai.New(openai.Config{Kind: KindOpenAI, APIKey: key, BaseURL: f.BaseURL, Model: name, HTTPClient: o.HTTPClient}), name, nil
	case KindOpenRouter:
		base := f.BaseURL
		if base == "" {
			base = openai.OpenRouterBaseURL
		}
		return openai.New(openai.Config{Kind: KindOpenRouter, APIKey: key, BaseURL: base, Model: name, HTTPClient: o.HTTPClient, Headers: OpenRouterHeaders, CacheControl: true, ReportCost: true}), name, nil
	case KindOpenAICompatible:
		if f.BaseURL == "" {
			return nil, "", errors.New("openai-compatible needs model.base_url")
		}
		if name == "" {
			return nil, "", errors.New("openai-compatible needs model.name")
		}
		return openai.New(openai.Config{Kind: KindOpenAICompatible, APIKey: key, BaseURL: f.BaseURL, Model: name, HTTPClient: o.HTTPClient}), name, nil
	}
	return nil, "", fmt.Errorf("unknown provider %q (want one of %s)", f.Provider, strings.Join(contract.Providers, ", "))
}

// ErrNoKey: no provider of the chain has its API key.
var ErrNoKey = errors.New("no API key")

// allKeysMissing fails when every link of the chain lacks its API key:
// the run would fail at its first call (a dead run, exit 5), so it is a
// configuration error before the run instead, naming each variable. One
// link with a key is enough: the chain falls back to it.
func allKeysMissing(links []Link) error {
	var parts []string
	for _, l := range links {
		m, ok := l.Provider.(missingKey)
		if !ok {
			return nil
		}
		parts = append(parts, fmt.Sprintf("%s for %s", m.env, m.kind))
	}
	return fmt.Errorf("%w: %s not set in the environment: export it (or name the variable that holds the key with model.api_key_env)", ErrNoKey, strings.Join(parts, ", "))
}

// missingKey stands in for a provider whose API key is not set.
type missingKey struct{ kind, env string }

func (m missingKey) Name() string { return m.kind }

func (m missingKey) Complete(context.Context, *model.Request) (*model.Response, error) {
	return nil, &model.Error{Class: model.ClassAuth, Provider: m.kind, Err: fmt.Errorf("%s is not set", m.env)}
}
