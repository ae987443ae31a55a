package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
)

// source is which layer a file is.
type source int

const (
	fromUser source = iota
	fromEditor
	fromWorkspace
)

// notTrusted is the reason, and the fix, ending the warning for a key an
// untrusted layer may not set: the workspace config of a workspace the
// user config does not trust, or the editor settings there (an editor
// merges the repository's own settings into them: .vscode/settings.json,
// a project-local Neovim config). With the warning's start it reads as
// one sentence ("SOURCE: KEY ignored: …; set it in …, or list … there.").
func (c *Config) notTrusted(kind source) string {
	fix := fmt.Sprintf("set it in the user config %s, or list the workspace under `trusted:` there", c.userPath)
	if kind == fromEditor {
		return fmt.Sprintf("editor settings may come from the repository (.vscode/settings.json, a project-local Neovim config) and the workspace %s is not trusted; %s", c.WorkspaceRoot, fix)
	}
	return fmt.Sprintf("the workspace %s is not trusted; %s", c.WorkspaceRoot, fix)
}

// userOnly is the reason ending the warning for a key read from the user
// config alone.
func (c *Config) userOnly() string {
	return "it is only read from the user config " + c.userPath + "; set it there"
}

// merge applies one layer over c. An untrusted layer (the workspace config
// or the editor settings of a workspace the user config does not trust)
// may not choose the provider, endpoint, key variable, cassette outside
// the workspace, fallbacks or prices, may not add allow rules or MCP
// servers, and may not widen the sandbox (writable and readable
// directories, limits); masking more paths is fine. An untrusted
// workspace config may not set the approval mode either; untrusted
// editor settings may choose ask or never, which only narrow.
func (c *Config) merge(p *parsed, kind source, trusted bool, getenv func(string) string) error {
	untrusted := !trusted
	warn := func(key, why string) {
		c.Warnings = append(c.Warnings, fmt.Sprintf("%s: %s ignored: %s.", p.source, key, why))
	}
	if err := c.mergeModel(p, kind, untrusted, warn); err != nil {
		return err
	}
	if a := p.Approve; a != nil {
		switch {
		case !slices.Contains(Choices()["approve"], *a):
			return p.errAt("$.approve", "approve: want ask, auto or never, got %q", *a)
		case *a == ApproveAuto && kind != fromUser:
			warn("approve", "automatic approval is only honoured from the user config "+c.userPath+" or the --approve auto flag")
		case untrusted && kind != fromEditor:
			warn("approve", c.notTrusted(kind))
		default:
			c.Approve = *a
		}
	}
	if err := c.mergeBudget(p, kind, untrusted, warn); err != nil {
		return err
	}
	if err := c.mergePolicy(p, kind, untrusted, warn); err != nil {
		return err
	}
	if err := c.mergeNetwork(p, kind, untrusted, warn); err != nil {
		return err
	}
	if len(p.Trusted) > 0 && kind != fromUser {
		warn("trusted", c.userOnly())
	}
	if len(p.Prices) > 0 {
		for name, pr := range p.Prices {
			if pr.Input < 0 || pr.Output < 0 || pr.CacheRead < 0 || pr.CacheWrite < 0 {
				return p.errAt("$.prices."+name, "prices.%s: prices must not be negative", name)
			}
		}
		if untrusted {
			warn("prices", c.notTrusted(kind))
		} else {
			c.Prices = c.Prices.Merge(p.Prices)
		}
	}
	if err := c.mergeMCP(p, kind, untrusted, warn, getenv); err != nil {
		return err
	}
	if err := c.mergeTelemetry(p, kind, warn); err != nil {
		return err
	}
	c.mergeHarness(p, kind, warn)
	return c.mergeSandbox(p, kind, untrusted, warn, getenv)
}

// validKeyEnv: api_key_env may only name a *_API_KEY or *_TOKEN
// (docs/policy.md#configuration)
// variable, so a config cannot send an arbitrary variable as a token.
func validKeyEnv(name string) bool {
	return name == "" || strings.HasSuffix(name, "_API_KEY") || strings.HasSuffix(name, "_TOKEN")
}

func (c *Config) mergeModel(p *parsed, kind source, untrusted bool, warn func(key, why string)) error {
	m := p.Model
	if m == nil {
		return nil
	}
	if m.Provider != nil && !slices.Contains(Choices()["model.provider"], *m.Provider) {
		return p.errAt("$.model.provider", "model.provider: unknown provider %q (want one of %s)", *m.Provider, strings.Join(contract.Providers, ", "))
	}
	if m.APIKeyEnv != nil && !validKeyEnv(*m.APIKeyEnv) {
		return p.errAt("$.model.api_key_env", "model.api_key_env: %q must end in _API_KEY or _TOKEN", *m.APIKeyEnv)
	}
	for i, f := range m.Fallback {
		if !validKeyEnv(f.APIKeyEnv) {
			return p.errAt(fmt.Sprintf("$.model.fallback[%d].api_key_env", i), "model.fallback[%d].api_key_env: %q must end in _API_KEY or _TOKEN", i, f.APIKeyEnv)
		}
		if !slices.Contains(Choices()["model.fallback.provider"], f.Provider) {
			return p.errAt(fmt.Sprintf("$.model.fallback[%d].provider", i), "model.fallback[%d].provider: unknown provider %q", i, f.Provider)
		}
	}
	set := func(key string, from *string, to *string) {
		if from == nil {
			return
		}
		if untrusted {
			warn("model."+key, c.notTrusted(kind))
			return
		}
		*to = *from
	}
	for _, d := range []struct {
		key  string
		from *string
		to   *time.Duration
	}{{"first_byte_timeout", m.FirstByteTimeout, &c.FirstByteTimeout}, {"idle_timeout", m.IdleTimeout, &c.IdleTimeout}} {
		if d.from == nil {
			continue
		}
		v, err := p.duration("$.model."+d.key, d.from)
		if err != nil {
			return err
		}
		if untrusted {
			warn("model."+d.key, c.notTrusted(kind))
			continue
		}
		*d.to = v
	}
	set("provider", m.Provider, &c.Model.Provider)
	set("base_url", m.BaseURL, &c.Model.BaseURL)
	set("api_key_env", m.APIKeyEnv, &c.Model.APIKeyEnv)
	if m.Fallback != nil {
		if untrusted {
			warn("model.fallback", c.notTrusted(kind))
		} else {
			c.Model.Fallback = append([]contract.Fallback(nil), m.Fallback...)
		}
	}
	if m.Name != nil {
		c.Model.Name = *m.Name
	}
	if m.Cassette != nil {
		c.Model.Cassette, c.cassetteFree = *m.Cassette, !untrusted
		if *m.Cassette != "" && !filepath.IsAbs(*m.Cassette) && c.WorkspaceRoot != "" {
			// A relative cassette in any layer names a file of the workspace.
			c.Model.Cassette = filepath.Join(c.WorkspaceRoot, *m.Cassette)
		}
	}
	return nil
}

// mergeBudget takes the layer's budget defaults. An untrusted layer may
// lower a budget but not raise it above the one below (or the default):
// a repository does not choose how much of the user's money a run spends.
func (c *Config) mergeBudget(p *parsed, kind source, untrusted bool, warn func(key, why string)) error {
	b := p.Budget
	if b == nil {
		return nil
	}
	d := contract.DefaultBudget()
	if b.Steps != nil {
		if *b.Steps < 0 {
			return p.errAt("$.budget.steps", "budget.steps must not be negative")
		}
		c.Budget.Steps = lowerOnly(c, untrusted, kind, warn, "budget.steps", *b.Steps, c.Budget.Steps, d.Steps)
	}
	if b.Tokens != nil {
		if *b.Tokens < 0 {
			return p.errAt("$.budget.tokens", "budget.tokens must not be negative")
		}
		c.Budget.Tokens = lowerOnly(c, untrusted, kind, warn, "budget.tokens", *b.Tokens, c.Budget.Tokens, d.Tokens)
	}
	if b.CostUSD != nil {
		if *b.CostUSD < 0 {
			return p.errAt("$.budget.cost_usd", "budget.cost_usd must not be negative")
		}
		c.Budget.CostUSD = lowerOnly(c, untrusted, kind, warn, "budget.cost_usd", *b.CostUSD, c.Budget.CostUSD, d.CostUSD)
	}
	if b.Wall != nil {
		w, err := p.duration("$.budget.wall", b.Wall)
		if err != nil {
			return err
		}
		c.Budget.Wall = lowerOnly(c, untrusted, kind, warn, "budget.wall", w, c.Budget.Wall, d.Wall)
	}
	return nil
}

// lowerOnly is the budget value v of a layer over cur (0: unset, so def
// applies): from an untrusted layer only when it does not raise the
// budget, else cur with a warning.
func lowerOnly[T int | int64 | float64 | time.Duration](c *Config, untrusted bool, kind source, warn func(key, why string), key string, v, cur, def T) T {
	limit := cur
	if limit == 0 {
		limit = def
	}
	if !untrusted || v <= limit {
		return v
	}
	warn(key, fmt.Sprintf("it would raise the budget above %v, and %s", limit, c.notTrusted(kind)))
	return cur
}

func (c *Config) mergePolicy(p *parsed, kind source, untrusted bool, warn func(key, why string)) error {
	if p.Policy == nil {
		return nil
	}
	layer := map[source]*policy.LayerRules{fromUser: &c.user, fromEditor: &c.editor, fromWorkspace: &c.workspace}[kind]
	for i, r := range p.Policy.Rules {
		if _, err := policy.New(policy.LayerRules{Layer: layer.Layer, Rules: []policy.Rule{r}}); err != nil {
			if inner := errors.Unwrap(err); inner != nil {
				err = inner // drop the "policy layer X rule 0" prefix: the position says where
			}
			return p.errAt(fmt.Sprintf("$.policy.rules[%d]", i), "policy.rules[%d]: %v", i, err)
		}
	}
	l := policy.LayerRules{Layer: layer.Layer, Rules: p.Policy.Rules}
	if untrusted {
		var dropped []policy.Rule
		l, dropped = policy.Untrusted(l)
		for _, r := range dropped {
			warn(fmt.Sprintf("policy rule %q", r.String()), c.notTrusted(kind))
		}
	}
	layer.Rules = append(layer.Rules, l.Rules...)
	return nil
}

func (c *Config) mergeSandbox(p *parsed, kind source, untrusted bool, warn func(key, why string), getenv func(string) string) error {
	s := p.Sandbox
	if s == nil {
		return nil
	}
	abs := func(key string, paths []string) ([]string, error) {
		var out []string
		for i, d := range paths {
			d = expandHome(d, getenv)
			if !filepath.IsAbs(d) {
				return nil, p.errAt(fmt.Sprintf("$.sandbox.%s[%d]", key, i), "sandbox.%s[%d]: %q is not an absolute path", key, i, d)
			}
			out = append(out, filepath.Clean(d))
		}
		return out, nil
	}
	masked, err := abs("masked", s.Masked)
	if err != nil {
		return err
	}
	writable, err := abs("writable", s.Writable)
	if err != nil {
		return err
	}
	c.Sandbox.Masked = append(c.Sandbox.Masked, masked...)
	if len(writable) > 0 {
		if untrusted {
			warn("sandbox.writable", c.notTrusted(kind))
		} else {
			c.Sandbox.Writable = append(c.Sandbox.Writable, writable...)
		}
	}
	readable, err := abs("readable", s.Readable)
	if err != nil {
		return err
	}
	if len(readable) > 0 {
		if untrusted {
			warn("sandbox.readable", c.notTrusted(kind))
		} else {
			c.Sandbox.Readable = append(c.Sandbox.Readable, readable...)
		}
	}
	if r := s.Require; r != nil {
		switch {
		case !slices.Contains(Choices()["sandbox.require"], *r):
			return p.errAt("$.sandbox.require", "sandbox.require: want linux, landlock or floor, got %q", *r)
		case kind != fromUser:
			warn("sandbox.require", c.userOnly())
		default:
			c.Sandbox.Require = *r
		}
	}
	if s.Limits == nil {
		return nil
	}
	// An untrusted layer's limits are checked (a bad value is an error
	// wherever it is written), then dropped.
	lim := c.Sandbox.Limits
	if err := mergeLimits(p, s.Limits, &lim); err != nil {
		return err
	}
	if untrusted {
		warn("sandbox.limits", c.notTrusted(kind))
		return nil
	}
	c.Sandbox.Limits = lim
	return nil
}

// mergeLimits sets the limits l writes over lim.
func mergeLimits(p *parsed, l *fileLimits, lim *Limits) error {
	var err error
	if l.Wall != nil {
		if lim.Wall, err = p.duration("$.sandbox.limits.wall", l.Wall); err != nil {
			return err
		}
	}
	if l.CPU != nil {
		if lim.CPU, err = p.duration("$.sandbox.limits.cpu", l.CPU); err != nil {
			return err
		}
	}
	if l.Memory != nil {
		if lim.Memory, err = p.size("$.sandbox.limits.memory", l.Memory); err != nil {
			return err
		}
	}
	if l.Output != nil {
		if lim.Output, err = p.size("$.sandbox.limits.output", l.Output); err != nil {
			return err
		}
	}
	if l.Procs != nil {
		if *l.Procs < 0 {
			return p.errAt("$.sandbox.limits.procs", "sandbox.limits.procs must not be negative")
		}
		lim.Procs = *l.Procs
	}
	if l.Files != nil {
		if *l.Files < 0 {
			return p.errAt("$.sandbox.limits.files", "sandbox.limits.files must not be negative")
		}
		lim.Files = *l.Files
	}
	return nil
}
