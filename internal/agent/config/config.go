// Package config loads ioh-lsp's layered configuration
// (docs/policy.md#configuration): the user file
// ($XDG_CONFIG_HOME/ioh/config.yaml, else ~/.config/ioh/config.yaml),
// editor settings (the `ioh` section) and the workspace's
// .ioh/config.yaml, merged low to high
// (docs/policy.md#layers-and-the-decision). Unknown keys are errors with
// file:line:col. The workspace file comes from the repository, and so may
// the editor settings (an editor merges the repository's
// .vscode/settings.json or project-local Neovim config into them), so
// unless the user config lists the workspace as trusted both layers' allow
// rules are dropped and the keys that choose where requests go, what they
// carry or what they cost, the MCP servers and what widens the sandbox are
// ignored, each with a visible warning that names the fix.
package config

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/config/xdg"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// Approve modes (--approve, docs/cli.md#run).
const (
	ApproveAsk   = "ask"
	ApproveAuto  = "auto"
	ApproveNever = "never"
)

// EditorSource labels errors and warnings about the editor's settings.
const EditorSource = "editor settings"

// LoadOptions say where the layers are.
type LoadOptions struct {
	// UserPath is the user config file; "" means the default location.
	UserPath string
	// WorkspaceRoot is the workspace's directory; its .ioh/config.yaml is
	// the workspace layer. "" means no workspace layer.
	WorkspaceRoot string
	// Editor is the editor's `ioh` settings section as JSON (nil: none).
	Editor json.RawMessage
	// Getenv reads the environment (os.Getenv when nil).
	Getenv func(string) string
}

// Limits are default sandbox limits; zero leaves the sandbox's default.
type Limits struct {
	Wall, CPU    time.Duration
	Memory       int64 // bytes
	Procs, Files int
	Output       int64 // bytes
}

// Sandbox is the `sandbox` key: extra masked paths, extra writable cache
// directories (absolute, ~ expanded) and default limits.
type Sandbox struct {
	Masked   []string
	Writable []string
	// Readable paths join the sandbox's read view (`sandbox.readable`).
	Readable []string
	Limits   Limits
	// Require is the weakest sandbox tier model-produced code may run
	// under: linux, landlock or floor (`sandbox.require`, user config
	// only); "" means the default, RequireDefault.
	Require string
}

// RequireDefault is the tier `sandbox.require` defaults to.
const RequireDefault = "landlock"

// Config is the merged configuration.
type Config struct {
	// Model is the default model selection for contracts that name none.
	Model contract.Model
	// FirstByteTimeout and IdleTimeout are model.first_byte_timeout and
	// model.idle_timeout; zero is the provider's default.
	FirstByteTimeout, IdleTimeout time.Duration
	// Approve is ask, auto or never (ask when unset).
	Approve string
	// Budget holds defaults for contracts; a zero field is unset.
	Budget contract.Budget
	// Trusted lists workspace roots (from the user config only).
	Trusted []string
	// Prices is the built-in table with the configured overrides merged.
	Prices model.Prices
	// Sandbox configures the sandbox adapter.
	Sandbox Sandbox
	// MCP lists the MCP servers (user config and editor settings only).
	MCP []MCPServer
	// Telemetry is where runs are exported (user config only).
	Telemetry Telemetry
	// Harness switches parts of the harness off (user config only).
	Harness Harness
	// WorkspaceRoot is the workspace (absolute, symlinks resolved), and
	// WorkspaceTrusted whether the user config trusts it.
	WorkspaceRoot    string
	WorkspaceTrusted bool
	// Warnings are settings that were ignored, for the user to see.
	Warnings []string

	user, editor, workspace policy.LayerRules
	// cassetteFree: Model.Cassette came from the user config or from the
	// editor settings or workspace config of a trusted workspace, so it
	// need not lie inside the workspace.
	cassetteFree bool
	// userPath is the user config file, named in the warnings' fixes.
	userPath string
	// hostRun are the work tree's paths the host's git runs or reads as
	// configuration (workspace.HostRunPaths), protected from writes.
	hostRun []string
}

// UserPath returns the default user config path.
func UserPath(getenv func(string) string) string {
	if getenv == nil {
		getenv = os.Getenv
	}
	base, err := xdg.Home(getenv, "XDG_CONFIG_HOME", ".config")
	if err != nil {
		home, _ := os.UserHomeDir()
		base = filepath.Join(home, ".config")
	}
	return filepath.Join(base, "ioh", "config.yaml")
}

// WorkspacePath is the workspace config file under root.
func WorkspacePath(root string) string { return filepath.Join(root, ".ioh", "config.yaml") }

// Load reads and merges the layers. A missing file is an empty layer; an
// unreadable or invalid one is an error naming file, line and column.
func Load(o LoadOptions) (*Config, error) {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	userPath := o.UserPath
	if userPath == "" {
		userPath = UserPath(o.Getenv)
	}
	c := &Config{Approve: ApproveAsk, Prices: model.DefaultPrices(), userPath: userPath}
	c.user = policy.LayerRules{Layer: policy.LayerUser}
	c.editor = policy.LayerRules{Layer: policy.LayerEditor}
	c.workspace = policy.LayerRules{Layer: policy.LayerWorkspace}

	user, err := readFile(userPath)
	if err != nil {
		return nil, err
	}
	var editor *parsed
	if len(o.Editor) > 0 && string(o.Editor) != "null" {
		if editor, err = decode(o.Editor, EditorSource); err != nil {
			return nil, err
		}
	}
	var ws *parsed
	if o.WorkspaceRoot != "" {
		root, err := filepath.Abs(o.WorkspaceRoot)
		if err != nil {
			return nil, fmt.Errorf("load config: workspace root: %w", err)
		}
		if real, err := filepath.EvalSymlinks(root); err == nil {
			root = real
		}
		c.WorkspaceRoot = root
		if ws, err = readFile(WorkspacePath(root)); err != nil {
			return nil, err
		}
		// What the host's git runs from the work tree (its configured
		// hooks directory, included files, .husky, ...) the agent may
		// not write, like .git itself.
		if c.hostRun, err = workspace.HostRunPaths(root); err != nil {
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s: git's configuration could not be read whole, so the files it runs from the work tree may not all be protected from the agent's writes (%v); fix or shorten that configuration.", root, err))
		}
	}
	if user != nil {
		for _, t := range user.Trusted {
			c.Trusted = append(c.Trusted, canonical(expandHome(t, o.Getenv)))
		}
	}
	c.WorkspaceTrusted = c.isTrusted(c.WorkspaceRoot)

	layers := []struct {
		p       *parsed
		kind    source
		trusted bool
	}{{user, fromUser, true}, {editor, fromEditor, c.WorkspaceTrusted}, {ws, fromWorkspace, c.WorkspaceTrusted}}
	for _, l := range layers {
		if l.p == nil {
			continue
		}
		if err := c.merge(l.p, l.kind, l.trusted, o.Getenv); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// PolicyLayers returns the policy layers below the task contract's, low to
// high: built-in (protected paths, with the paths the host's git runs from
// this work tree: workspace.HostRunPaths), user, editor and workspace
// (allow rules already dropped when the workspace is untrusted).
func (c *Config) PolicyLayers() []policy.LayerRules {
	cp := func(l policy.LayerRules) policy.LayerRules {
		return policy.LayerRules{Layer: l.Layer, Rules: append([]policy.Rule(nil), l.Rules...)}
	}
	return []policy.LayerRules{policy.Builtin(c.hostRun), cp(c.user), cp(c.editor), cp(c.workspace)}
}

// isTrusted reports whether dir is one of the trusted roots (exact match
// after cleaning and resolving symlinks; a parent does not trust its
// children).
func (c *Config) isTrusted(dir string) bool {
	if dir == "" {
		return false
	}
	dir = canonical(dir)
	for _, t := range c.Trusted {
		if t == dir {
			return true
		}
	}
	return false
}

// ContractTrusted reports whether a task contract may set the keys an
// untrusted repository may not. Inline contracts (path "") come from the
// user or the editor; a task file inside the workspace is trusted exactly
// when the workspace is; a task file elsewhere only under a trusted root.
func (c *Config) ContractTrusted(path string) bool {
	if path == "" {
		return true
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	abs = canonical(abs)
	if c.WorkspaceRoot != "" {
		if rel, err := filepath.Rel(c.WorkspaceRoot, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return c.WorkspaceTrusted
		}
	}
	for dir := filepath.Dir(abs); ; dir = filepath.Dir(dir) {
		if c.isTrusted(dir) {
			return true
		}
		if dir == filepath.Dir(dir) {
			return false
		}
	}
}

func canonical(p string) string {
	p = filepath.Clean(p)
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	return p
}

func expandHome(p string, getenv func(string) string) string {
	if p == "~" || (len(p) > 1 && p[0] == '~' && (p[1] == '/' || p[1] == '\\')) {
		if home := getenv("HOME"); home != "" {
			return filepath.Join(home, p[1:])
		}
	}
	return p
}
