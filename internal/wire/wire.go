// Package wire builds an agent harness for one workspace from the process's
// configuration: the trace store under the state directory, the providers
// (with retries, fallbacks and optional recording), the price table, the
// policy layers, the OS sandbox adapter and verification. The CLI and the
// language server both build their harness here, so the two are users of
// the same code path.
package wire

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/config"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contain"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/mcptool"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/provider"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/redact"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/trace"
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox"
	"github.com/ioh-lsp/ioh-lsp/internal/sandboxexec"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// Overrides are per-invocation choices that win over the contract (CLI
// flags): provider, model name, replay cassette, a cassette to record into.
type Overrides struct {
	Provider string
	Model    string
	Cassette string
	Record   string
}

// Options say what to build.
type Options struct {
	// Root is the workspace directory.
	Root string
	// Getenv and Environ read the environment (default os.Getenv and
	// os.Environ); Environ finds the secrets to keep out of the trace.
	Getenv  func(string) string
	Environ func() []string
	// Overrides from the command line.
	Overrides Overrides
	Approver  agent.Approver
	Sink      event.Sink
	// EditorSettings is the editor's `ioh` section (JSON); its policy
	// rules form the editor layer.
	EditorSettings json.RawMessage
	Logger         *slog.Logger
	// Sandbox replaces the OS sandbox adapter (tests).
	Sandbox contain.Sandbox
	// Pool is the sandbox pool the engine's runs go through (warm stages,
	// spares made ahead): a long-lived caller with several engines (the
	// language server's folders, ACP's sessions) shares one and closes it
	// when it ends. Nil: the engine gets its own, closed by Engine.Close.
	Pool *sandbox.Pool
	// Index keeps a trigram index of the workspace under the state
	// directory, fresh through a watcher, for the agent's searches (the
	// language server, which lives for the editor session). Engine.Close
	// stops it.
	Index bool
	// Config is the layered configuration; nil loads it (LoadConfig).
	Config *config.Config
	// MCPServers are servers an ACP client passed (session/new's
	// mcpServers), the editor layer: added to the configuration's; an
	// entry replaces a configured one of the same name.
	MCPServers []mcptool.Server
}

// Engine is a harness with what it was built from.
type Engine struct {
	Harness *agent.Harness
	Root    *workspace.Root
	Store   *trace.Store
	Config  *config.Config
	// MCP holds the MCP servers' connections (nil when none is
	// configured).
	MCP *mcptool.Manager
	// Pool is the sandbox pool of the engine's runs (Options.Pool, or
	// its own); nil when Options.Sandbox replaced the adapter.
	Pool *sandbox.Pool
	// Close releases the trace store and stops the MCP servers.
	Close func()
}

// LoadConfig loads the layered configuration for the workspace at root
// (user file, editor settings, the workspace's .ioh/config.yaml).
func LoadConfig(root string, getenv func(string) string, editor json.RawMessage) (*config.Config, error) {
	return config.Load(config.LoadOptions{WorkspaceRoot: root, Editor: editor, Getenv: getenv})
}

// NewHarness builds the harness for o.Root.
func NewHarness(ctx context.Context, o Options) (*Engine, error) {
	o = o.withDefaults()
	root, err := workspace.NewRoot(o.Root)
	if err != nil {
		return nil, fmt.Errorf("open workspace %s: %w", o.Root, err)
	}
	cfg := o.Config
	if cfg == nil {
		if cfg, err = LoadConfig(root.Dir(), o.Getenv, o.EditorSettings); err != nil {
			return nil, err
		}
	}
	var fromEditor []string
	for _, w := range cfg.Warnings {
		o.Logger.Warn(w)
		if key, ok := strings.CutPrefix(w, config.EditorSource+": "); ok {
			key, _, _ = strings.Cut(key, " ignored:")
			fromEditor = append(fromEditor, key)
		}
	}
	if len(fromEditor) > 0 {
		// Once, where the user looks: their own settings may be among
		// those the workspace's trust decides.
		o.Logger.Warn(fmt.Sprintf("ioh: editor settings ignored in %s: %s. The log says why; most need the user config %s, or the workspace listed under `trusted:` there.",
			root.Dir(), strings.Join(fromEditor, ", "), config.UserPath(o.Getenv)), "notify", true)
	}
	sb := o.Sandbox
	var pool *sandbox.Pool
	releasePool, built := func() {}, false
	if sb == nil {
		// A harness runs many commands (the agent's, its checks'): each
		// run's stage is started ahead, after the first run, until the
		// pool closes (pool.go).
		pool, releasePool = enginePool(o.Pool)
		defer func() {
			if !built {
				releasePool()
			}
		}()
		set := SandboxFromConfig(cfg) // sandbox_config.go, shared with `sandbox run`
		require := set.Require
		if require == "" {
			require = config.RequireDefault
		}
		log := o.Logger
		ad, err := sandboxexec.New(sandboxexec.Options{
			Log: o.Logger, Masked: set.Masked, Writable: set.Writable,
			Readable: set.Readable, Require: require,
			// Once per reason: on the CLI's stderr, and mirrored to the
			// editor as a warning by the language server's logger.
			OnDowngrade: func(tier, why string) {
				log.Warn("sandbox: model-produced code runs in the "+tier+" tier, not the strongest", "why", why, "notify", true)
			},
			Env: toolchainEnv(o.Getenv), Scratch: toolchainScratch(o.Getenv),
			Limits: set.Limits, Pool: pool,
		})
		if err != nil {
			return nil, fmt.Errorf("set up the sandbox: %w", err)
		}
		sb = ad
	}
	store, err := OpenStore(ctx, root.Dir(), o.Getenv, o.Environ)
	if err != nil {
		return nil, err
	}
	prices := model.NewPriceBook(cfg.Prices)
	mcp, err := newMCP(cfg, o, sb)
	if err != nil {
		store.Close()
		return nil, err
	}
	sink, stopTelemetry, err := withTelemetry(ctx, cfg, o)
	if err != nil {
		mcp.Close()
		store.Close()
		return nil, err
	}
	h, err := agent.New(agent.Options{
		Root: root, Store: store, Sandbox: sb, Approver: o.Approver, Events: sink, Logger: o.Logger,
		Layers:    cfg.PolicyLayers(),
		Secrets:   Secrets(o.Getenv, o.Environ),
		Providers: o.providers(cfg),
		Prepare:   prepare(cfg, o.Logger),
		Cost: func(_, name string, u model.Usage) (float64, model.CostSource) {
			return prices.Cost(name, u)
		},
		Model: o.Overrides.resolve,
		MCP:   toolSource(mcp),
		// The model sees its diff once before the checks
		// (docs/architecture.md#what-the-model-sees).
		ReviewChanges: !cfg.Harness.NoReview,
		NoMasking:     cfg.Harness.NoMasking,
	})
	if err != nil {
		stopTelemetry()
		mcp.Close()
		store.Close()
		return nil, err
	}
	closeIndex := openIndex(root, cfg, o)
	built = true
	return &Engine{Harness: h, Root: root, Store: store, Config: cfg, MCP: mcp, Pool: pool, Close: func() { closeIndex(); mcp.Close(); stopTelemetry(); store.Close(); releasePool() }}, nil
}

// openIndex starts the workspace index when o asks for it and returns
// what stops it. Without one, searches scan: a failure is logged, not
// fatal.
func openIndex(root *workspace.Root, cfg *config.Config, o Options) func() {
	if !o.Index {
		return func() {}
	}
	dir, err := trace.StateDir(o.Getenv)
	if err == nil {
		var x *workspace.Index
		if x, err = workspace.OpenIndex(root, workspace.IndexOptions{StateDir: dir, Watch: true, Logger: o.Logger,
			Private: guardedReads(cfg), Secrets: Secrets(o.Getenv, o.Environ)}); err == nil {
			return func() { x.Close() }
		}
	}
	o.Logger.Warn("workspace index unavailable; searches scan", "err", err)
	return func() {}
}

// guardedReads reports the files the built-in and configured policy do
// not simply allow reading (.env files, keys, and what the user's rules
// guard): the index never holds their trigrams, so what they hold never
// reaches the state directory by that way.
func guardedReads(cfg *config.Config) func(rel string) bool {
	pol, err := policy.New(append([]policy.LayerRules{policy.Builtin(nil)}, cfg.PolicyLayers()...)...)
	if err != nil {
		pol, _ = policy.New(policy.Builtin(nil))
	}
	return func(rel string) bool { return pol.Check(policy.ActRead, rel).Effect != policy.Allow }
}

// prepare fills a contract from the configuration and enforces what an
// untrusted task file may not choose, and where its cassette may be
// (config.PrepareContract). Each warning is logged at once, before the
// run can fail to start (a provider that cannot be built, a refused
// cassette), so the user sees what was ignored first: on stderr from the
// CLI, as window/logMessage from the language server.
func prepare(cfg *config.Config, log *slog.Logger) func(*contract.Contract) ([]string, error) {
	return func(c *contract.Contract) ([]string, error) {
		warnings, err := cfg.PrepareContract(c)
		for _, w := range warnings {
			log.Warn(w)
		}
		return warnings, err
	}
}

func (o Options) withDefaults() Options {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Environ == nil {
		o.Environ = os.Environ
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// providers builds each run's provider from its contract, whose model
// the harness has already resolved (Overrides.resolve).
func (o Options) providers(cfg *config.Config) agent.ProviderFactory {
	return func(c *contract.Contract, report agent.RetryReporter) (model.Provider, error) {
		m := c.Model
		onRetry := func(r provider.RetryInfo) {
			ev := agent.RetryEvent{Provider: r.Provider, Model: r.Model, Attempt: r.Attempt, Class: r.Class, Delay: r.Delay, Next: r.Next}
			if r.Err != nil {
				ev.Err = r.Err.Error()
			}
			report(ev)
		}
		p, err := provider.New(m, c.Retry, provider.Options{Getenv: o.Getenv, Record: o.Overrides.Record, OnRetry: onRetry,
			FirstByteTimeout: cfg.FirstByteTimeout, IdleTimeout: cfg.IdleTimeout,
			Notice: func(s string) { o.Logger.Warn(s) }})
		if err != nil {
			return nil, err
		}
		if d, err := time.ParseDuration(o.Getenv(TestDelayEnv)); err == nil && d > 0 {
			p = slowProvider{p, d}
		}
		return p, nil
	}
}

// TestDelayEnv names a test-only knob: a Go duration every model call
// waits before it is sent, so a crash test can kill the process while a
// call is in flight.
const TestDelayEnv = "IOH_TEST_MODEL_DELAY"

type slowProvider struct {
	model.Provider
	d time.Duration
}

// Targets forwards the wrapped provider's targets (model.Targeter).
func (s slowProvider) Targets() []model.Target {
	if t, ok := s.Provider.(model.Targeter); ok {
		return t.Targets()
	}
	return nil
}

func (s slowProvider) Complete(ctx context.Context, req *model.Request) (*model.Response, error) {
	t := time.NewTimer(s.d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.Provider.Complete(ctx, req)
}

// resolve is the one place a run's model is decided (agent.Options.Model):
// the command line's overrides over the contract's choice, then each
// provider's default model name where none is given, so that pricing, the
// dollar-budget check and run_started name the model actually called.
func (ov Overrides) resolve(m contract.Model) contract.Model {
	m = ApplyOverrides(m, ov)
	if m.Name == "" && m.Provider != provider.KindReplay {
		m.Name = provider.DefaultModels[m.Provider]
	}
	m.Fallback = append([]contract.Fallback(nil), m.Fallback...)
	for i, f := range m.Fallback {
		if f.Name == "" {
			m.Fallback[i].Name = provider.DefaultModels[f.Provider]
		}
	}
	return m
}

// ApplyOverrides returns m with the command line's choices: a cassette
// alone selects replay.
func ApplyOverrides(m contract.Model, ov Overrides) contract.Model {
	if ov.Cassette != "" {
		m.Cassette = ov.Cassette
		if ov.Provider == "" {
			m.Provider = provider.KindReplay
			m.Name = ""
			m.Fallback = nil
		}
	}
	if ov.Provider != "" {
		if ov.Provider != m.Provider {
			m.BaseURL, m.APIKeyEnv, m.Name, m.Fallback = "", "", "", nil
		}
		m.Provider = ov.Provider
	}
	if ov.Model != "" {
		m.Name = ov.Model
	}
	return m
}

// OpenStore opens the trace database of the workspace at root under the
// state directory, redacting every secret found in the environment.
func OpenStore(ctx context.Context, root string, getenv func(string) string, environ func() []string) (*trace.Store, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if environ == nil {
		environ = os.Environ
	}
	dir, err := trace.StateDir(getenv)
	if err != nil {
		return nil, err
	}
	return trace.Open(ctx, trace.DBPath(dir, root), Secrets(getenv, environ))
}

// Secrets returns the values of environment variables that hold keys:
// names ending in _API_KEY, _TOKEN, _SECRET or _PASSWORD, and each
// provider's default key variable.
func Secrets(getenv func(string) string, environ func() []string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(v string) {
		if v != "" && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	for _, kv := range environ() {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		up := strings.ToUpper(k)
		for _, suf := range []string{"_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD"} {
			if strings.HasSuffix(up, suf) {
				add(v)
			}
		}
	}
	for _, k := range provider.DefaultKeyEnv {
		add(getenv(k))
	}
	// Credentials in URLs (GOPROXY=https://user:token@host) reach
	// sandboxed commands and so their output.
	for _, s := range redact.EnvSecrets(environ()) {
		add(s.Value)
	}
	sort.Strings(out)
	return out
}

// FindRoot is the workspace of a path: the nearest directory at or above
// it holding .git, else fallback.
func FindRoot(path, fallback string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fallback
	}
	if fi, err := os.Stat(abs); err == nil && !fi.IsDir() {
		abs = filepath.Dir(abs)
	}
	for d := abs; ; {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		p := filepath.Dir(d)
		if p == d {
			return fallback
		}
		d = p
	}
}
