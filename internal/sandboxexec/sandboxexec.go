// Package sandboxexec adapts package sandbox to the agent's contain.Sandbox
// interface: it stages a request's change set over the workspace (an
// overlay on Linux, a copy elsewhere) and runs the command contained.
// Only cmd/ioh-lsp wires it in; the agent never imports package sandbox.
package sandboxexec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contain"
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox"
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// Defaults for requests that leave them at zero.
const (
	DefaultTimeout     = contain.MaxTimeout
	DefaultOutputLimit = 1 << 20
)

// ErrBadRequest: a request is malformed (no command, both argv and shell,
// a relative root, a Dir that leaves the root).
var ErrBadRequest = errors.New("sandboxexec: bad request")

// Options configure an Adapter (from the `sandbox` config key).
type Options struct {
	// Masked paths hidden in addition to policy.DefaultMasked.
	Masked []string
	// Writable cache directories (GOCACHE, GOMODCACHE, …) that persist
	// between runs.
	Writable []string
	// Env adds KEY=VALUE entries (e.g. GOCACHE=…); secret-looking names
	// are refused.
	Env []string
	// Limits are defaults: CPU, Memory, Procs, Files apply to every run;
	// Wall and Output apply when a request leaves them at zero.
	Limits sandbox.Limits
	// Backend forces a backend ("" picks the strongest that works).
	Backend string
	// Require is the weakest tier model-produced code may run under
	// (`sandbox.require`: linux, landlock or floor; "" accepts any).
	Require string
	// Readable paths join the read view (`sandbox.readable`).
	Readable []string
	// Scratch directories of the read view (a read-only host cache such as
	// GOCACHE) take the command's writes in a private layer discarded with
	// the run, where the tier can layer (sandbox.Spec.Scratch).
	Scratch []string
	// OnDowngrade, when set, hears once per distinct reason that a run got
	// a weaker tier than the strongest (the CLI's stderr, the editor's
	// warning).
	OnDowngrade func(backend, why string)
	Log         *slog.Logger
	// Pool is the sandbox pool the runs go through (warm stages, spares
	// made ahead): a long-lived caller's, which closes it. Nil: the cold
	// path, every run sets itself up and leaves nothing behind.
	Pool *sandbox.Pool
}

// Adapter implements contain.Sandbox with a sandbox.Runner. Safe for
// concurrent use.
type Adapter struct {
	runner *sandbox.Runner
	opts   Options
	// views keeps the policy's expansions between the runs of a
	// long-lived caller (one with a Pool); nil: each view afresh.
	views *policy.Cache

	mu   sync.Mutex
	told map[string]bool // downgrades already reported
	// resolve is the egress proxies' name lookup (nil: the system's);
	// tests give their loopback servers names.
	resolve func(ctx context.Context, host string) ([]netip.Addr, error)
}

var _ contain.Sandbox = (*Adapter)(nil)

// New checks opts and returns an Adapter.
func New(opts Options) (*Adapter, error) {
	switch opts.Require {
	case "", sandbox.BackendLinux, sandbox.BackendLandlock, sandbox.BackendFloor:
	default:
		return nil, fmt.Errorf("%w: sandbox.require %q (want linux, landlock or floor)", ErrBadRequest, opts.Require)
	}
	for _, p := range append(append(append(append([]string{}, opts.Masked...), opts.Writable...), opts.Readable...), opts.Scratch...) {
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("%w: path %q is not absolute", ErrBadRequest, p)
		}
	}
	for _, kv := range opts.Env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%w: environment entry %q is not KEY=VALUE", ErrBadRequest, kv)
		}
	}
	if opts.Limits.Wall <= 0 {
		opts.Limits.Wall = DefaultTimeout
	}
	if opts.Limits.Output <= 0 {
		opts.Limits.Output = DefaultOutputLimit
	}
	a := &Adapter{runner: sandbox.NewRunner(opts.Log, sandbox.WithPool(opts.Pool)), opts: opts, told: map[string]bool{}}
	if opts.Pool != nil {
		a.views = policy.NewCache()
	}
	return a, nil
}

// Exec runs req over its workspace with req.Changes staged on top. Writes
// the command makes to the workspace go to a private layer and vanish.
func (a *Adapter) Exec(ctx context.Context, req *contain.Request) (*contain.Result, error) {
	argv, err := command(req)
	if err != nil {
		return nil, err
	}
	if !filepath.IsAbs(req.Root) {
		return nil, fmt.Errorf("%w: root %q is not absolute", ErrBadRequest, req.Root)
	}
	changes, err := convert(req.Changes)
	if err != nil {
		return nil, err
	}
	changes, withheld := withhold(changes, req.Withheld)
	stage, err := sandbox.NewStage(req.Root, changes)
	if err != nil {
		return nil, fmt.Errorf("stage changes: %w", err)
	}
	defer stage.Close()
	dir := stage.Lower()
	if req.Dir != "" {
		rel := path.Clean(filepath.ToSlash(req.Dir))
		if path.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, "../") {
			return nil, fmt.Errorf("%w: dir %q leaves the workspace", ErrBadRequest, req.Dir)
		}
		dir = filepath.Join(dir, filepath.FromSlash(rel))
	}
	limits := a.opts.Limits
	if req.Timeout > 0 {
		limits.Wall = req.Timeout
	}
	if req.OutputLimit > 0 {
		limits.Output = req.OutputLimit
	}
	// A writable cache that is a work tree keeps what its git runs.
	protected, perr := HostRunProtected(a.opts.Writable)
	if perr != nil && a.opts.Log != nil {
		a.opts.Log.Warn("sandbox: git configuration of a writable root", "err", perr)
	}
	var buf bytes.Buffer // both writers share the sandbox's output lock
	out, err := a.runner.Run(ctx, &sandbox.Spec{
		Argv: argv, Dir: dir, Env: a.opts.Env, Writable: a.opts.Writable, Protected: protected,
		Network: req.Network, NetProxy: specProxy(req.NetProxy), Limits: limits, Stage: stage,
		View: a.view(a.opts.Env, a.opts.Readable), Scratch: a.opts.Scratch, Backend: a.opts.Backend, Require: a.opts.Require,
		Stdout: &buf, Stderr: &buf, Stream: req.Stream,
	})
	if out == nil {
		return nil, fmt.Errorf("sandbox exec: %w", err)
	}
	res := &contain.Result{
		ExitCode: out.ExitCode, Signal: out.Signal, CapHit: out.CapHit,
		Output: buf.Bytes(), Truncated: out.Truncated, Backend: out.Backend,
		Downgrade: out.Downgrade, Duration: out.Duration,
	}
	for _, m := range out.Mechanisms {
		res.Mechanisms = append(res.Mechanisms, contain.Mechanism{Name: m.Name, State: m.State, Detail: m.Detail})
	}
	if m := withheldMechanism(withheld); m != nil {
		res.Mechanisms = append(res.Mechanisms, *m)
	}
	if out.Downgrade != "" && a.opts.OnDowngrade != nil {
		a.mu.Lock()
		first := !a.told[out.Backend+out.Downgrade]
		a.told[out.Backend+out.Downgrade] = true
		a.mu.Unlock()
		if first {
			a.opts.OnDowngrade(out.Backend, out.Downgrade)
		}
	}
	return res, err
}

// withhold stages every withheld workspace file that the change set
// does not write as an empty file (mode 0600): the command sees that the
// file exists, not what it holds. A file the change set writes keeps the
// change's content (the model's own). It returns the changes and the
// paths withheld.
func withhold(changes []sandbox.Change, withheld []string) ([]sandbox.Change, []string) {
	written := make(map[string]bool, len(changes))
	for _, c := range changes {
		written[path.Clean(c.Path)] = true
	}
	var done []string
	for _, w := range withheld {
		rel := path.Clean(filepath.ToSlash(w))
		if rel == "." || path.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, "../") || written[rel] {
			continue
		}
		written[rel] = true
		changes = append(changes, sandbox.Change{Path: rel, Content: []byte{}, Mode: 0o600})
		done = append(done, rel)
	}
	return changes, done
}

// maxNamedWithheld caps the paths the read-policy mechanism names.
const maxNamedWithheld = 10

// withheldMechanism names the files withheld from the command (nil when
// none was).
func withheldMechanism(withheld []string) *contain.Mechanism {
	if len(withheld) == 0 {
		return nil
	}
	names := withheld
	more := ""
	if len(names) > maxNamedWithheld {
		names, more = names[:maxNamedWithheld], fmt.Sprintf(" and %d more", len(withheld)-maxNamedWithheld)
	}
	return &contain.Mechanism{Name: contain.MechanismReadPolicy, State: sandbox.StateApplied,
		Detail: fmt.Sprintf("%d workspace file(s) the read policy withholds are empty inside: %s%s; an approval or an allow rule (read PATH) makes one readable", len(withheld), strings.Join(names, ", "), more)}
}

func command(req *contain.Request) ([]string, error) {
	switch {
	case len(req.Argv) > 0 && req.Shell != "":
		return nil, fmt.Errorf("%w: both argv and shell given", ErrBadRequest)
	case len(req.Argv) > 0:
		if req.Argv[0] == "" {
			return nil, fmt.Errorf("%w: empty command name", ErrBadRequest)
		}
		return req.Argv, nil
	case strings.TrimSpace(req.Shell) != "":
		return []string{"/bin/sh", "-c", req.Shell}, nil
	}
	return nil, fmt.Errorf("%w: no command", ErrBadRequest)
}

// convert maps workspace changes to the sandbox's staging format. A rename
// arrives as a delete of From plus a create of Path, so each maps alone.
func convert(cs []workspace.Change) ([]sandbox.Change, error) {
	out := make([]sandbox.Change, 0, len(cs))
	for _, c := range cs {
		switch c.Op {
		case workspace.OpDelete:
			out = append(out, sandbox.Change{Path: c.Path, Delete: true})
		case workspace.OpCreate, workspace.OpModify:
			out = append(out, sandbox.Change{Path: c.Path, Content: c.Content, Mode: c.Mode})
		default:
			return nil, fmt.Errorf("%w: change %s has unknown op %q", ErrBadRequest, c.Path, c.Op)
		}
	}
	return out, nil
}
