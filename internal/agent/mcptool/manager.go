package mcptool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contain"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/tools"
)

// Options are a Manager's dependencies.
type Options struct {
	// Spawner runs stdio servers contained; nil refuses stdio servers.
	Spawner contain.Spawner
	// HTTPClient reaches HTTP servers (default: a client of its own).
	HTTPClient *http.Client
	Logger     *slog.Logger
	// Version is the client version announced to servers.
	Version string
}

// Judge answers what the run's policy says about an act before anything
// is asked of the user: a server is started or connected to only when
// each of its hosts is allowed outright.
type Judge = func(act policy.Act, target string) policy.Verdict

// Manager holds the connections to a set of servers, shared by the runs
// of one engine: a server is started on the first run that needs it and
// restarted after it crashed or hung. Safe for concurrent use.
type Manager struct {
	opts    Options
	log     *slog.Logger
	servers []*conn
}

// conn is one server and its live session (nil until connected or after
// it broke).
type conn struct {
	m   *Manager
	srv Server

	mu     sync.Mutex
	sess   *mcp.ClientSession
	proc   *contain.Process
	egress contain.Egress // a stdio server's network proxy (egress.go)
	tools  []*mcp.Tool
}

// NewManager validates servers and returns their manager; nothing is
// started yet. Names must be unique.
func NewManager(servers []Server, o Options) (*Manager, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	hc := *o.HTTPClient
	hc.Transport = boundedDelete{hc.Transport}
	o.HTTPClient = &hc
	if o.Version == "" {
		o.Version = "dev"
	}
	m := &Manager{opts: o, log: o.Logger}
	seen := map[string]bool{}
	for _, s := range servers {
		if err := s.Validate(); err != nil {
			return nil, err
		}
		if seen[s.Name] {
			return nil, fmt.Errorf("%w %s: configured twice", ErrConfig, s.Name)
		}
		seen[s.Name] = true
		s.Tools = append([]string(nil), s.Tools...)
		m.servers = append(m.servers, &conn{m: m, srv: s})
	}
	sort.Slice(m.servers, func(i, j int) bool { return m.servers[i].srv.Name < m.servers[j].srv.Name })
	return m, nil
}

// Tools connects to every server with an exposed tool whose hosts judge
// allows, lists its tools and returns the exposed ones as agent tools,
// sorted by name; warnings say what was left out and why. A server that
// fails to start costs its tools, not the run.
func (m *Manager) Tools(ctx context.Context, judge Judge) ([]tools.Tool, []string) {
	if m == nil {
		return nil, nil
	}
	var out []tools.Tool
	var warnings []string
	for _, c := range m.servers {
		if len(c.srv.Tools) == 0 {
			continue
		}
		if why := c.refused(judge); why != "" {
			warnings = append(warnings, fmt.Sprintf("mcp server %s not started: %s", c.srv.Name, why))
			continue
		}
		listed, err := c.list(ctx)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("mcp server %s unavailable: %v", c.srv.Name, err))
			continue
		}
		found := map[string]bool{}
		for _, t := range listed {
			if !c.srv.exposes(t.Name) {
				continue
			}
			found[t.Name] = true
			name := ToolName(c.srv.Name, t.Name)
			if !toolRE().MatchString(name) {
				warnings = append(warnings, fmt.Sprintf("mcp server %s: tool %q left out: %q is not a valid model tool name", c.srv.Name, t.Name, name))
				continue
			}
			mt, err := newTool(c, t)
			if err != nil {
				warnings = append(warnings, fmt.Sprintf("mcp server %s: tool %q left out: %v", c.srv.Name, t.Name, err))
				continue
			}
			out = append(out, mt)
		}
		for _, want := range c.srv.Tools {
			if want != "*" && !found[want] {
				warnings = append(warnings, fmt.Sprintf("mcp server %s lists no tool %q", c.srv.Name, want))
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Spec().Name < out[j].Spec().Name })
	for _, w := range warnings {
		m.log.Warn(w)
	}
	return out, warnings
}

// refused says why the policy keeps the server from starting ("" when it
// does not): every host it can reach must be allowed outright.
func (c *conn) refused(judge Judge) string {
	if judge == nil {
		return ""
	}
	for _, h := range c.srv.hosts() {
		if v := judge(policy.ActNet, h); v.Effect != policy.Allow {
			return fmt.Sprintf("net %s is %s by the policy (layer %s); add a rule {act: net, effect: allow, pattern: %q} to the user config to use it", h, verb(v.Effect), v.Layer, h)
		}
	}
	return ""
}

func verb(e policy.Effect) string {
	switch e {
	case policy.Deny:
		return "denied"
	case policy.Ask:
		return "not allowed outright (ask)"
	}
	return string(e)
}

// closeWait bounds how long dropping a session waits for its server.
const closeWait = 2 * time.Second

// boundedDelete gives the DELETE that ends an HTTP session closeWait to
// be answered: the SDK sends it without a deadline, and a hung server
// would hold it (and its goroutine) forever.
type boundedDelete struct{ rt http.RoundTripper }

func (b boundedDelete) RoundTrip(r *http.Request) (*http.Response, error) {
	rt := b.rt
	if rt == nil {
		rt = http.DefaultTransport
	}
	if r.Method != http.MethodDelete {
		return rt.RoundTrip(r)
	}
	ctx, cancel := context.WithTimeout(r.Context(), closeWait)
	resp, err := rt.RoundTrip(r.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = cancelOnClose{resp.Body, cancel}
	return resp, nil
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c cancelOnClose) Close() error { err := c.ReadCloser.Close(); c.cancel(); return err }

// Close stops every server.
func (m *Manager) Close() error {
	if m == nil {
		return nil
	}
	var errs []error
	for _, c := range m.servers {
		c.mu.Lock()
		errs = append(errs, c.dropLocked())
		c.mu.Unlock()
	}
	return errors.Join(errs...)
}

// list returns the server's tools, connecting first when needed.
func (c *conn) list(ctx context.Context) ([]*mcp.Tool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sess != nil {
		return c.tools, nil
	}
	if err := c.connectLocked(ctx); err != nil {
		return nil, err
	}
	return c.tools, nil
}

// session returns a live session, reconnecting one that broke.
func (c *conn) session(ctx context.Context) (*mcp.ClientSession, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sess != nil {
		return c.sess, nil
	}
	if err := c.connectLocked(ctx); err != nil {
		return nil, err
	}
	return c.sess, nil
}

// broken drops sess after a call found it dead or hung: the next call
// starts the server again.
func (c *conn) broken(sess *mcp.ClientSession) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sess == sess {
		c.dropLocked()
	}
}

// dropLocked ends the session and stops the server. Closing a session
// waits for the server to acknowledge; a hung server gets closeWait, then
// is left behind (an HTTP server's DELETE is bounded by boundedDelete; a
// stdio server is killed with its process).
func (c *conn) dropLocked() error {
	var err error
	if sess := c.sess; sess != nil {
		c.sess = nil
		done := make(chan error, 1)
		go func() { done <- sess.Close() }()
		t := time.NewTimer(closeWait)
		select {
		case err = <-done:
		case <-t.C:
		}
		t.Stop()
	}
	if c.proc != nil {
		c.proc.Close()
		c.proc = nil
	}
	if c.egress != nil {
		c.egress.Close()
		c.egress = nil
	}
	return err
}

func (c *conn) connectLocked(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, StartTimeout)
	defer cancel()
	var t mcp.Transport
	if c.srv.URL != "" {
		t = &mcp.StreamableClientTransport{Endpoint: c.srv.URL, HTTPClient: c.m.opts.HTTPClient, MaxRetries: -1, DisableStandaloneSSE: true}
	} else {
		if c.m.opts.Spawner == nil {
			return errors.New("no sandbox can host stdio servers here, and they never run uncontained")
		}
		env := make([]string, 0, len(c.srv.Env))
		for k, v := range c.srv.Env {
			env = append(env, k+"="+v)
		}
		sort.Strings(env)
		np, eg, err := c.startEgress(ctx)
		if err != nil {
			return fmt.Errorf("start %s contained: %w", strings.Join(c.srv.Command, " "), err)
		}
		c.egress = eg
		p, err := c.m.opts.Spawner.Spawn(ctx, &contain.ProcessRequest{
			Argv: c.srv.Command, Dir: c.srv.Dir, Env: env, Network: len(c.srv.Network) > 0 && np == nil, NetProxy: np,
		})
		if err != nil {
			c.dropLocked()
			return fmt.Errorf("start %s contained: %w", strings.Join(c.srv.Command, " "), err)
		}
		c.proc = p
		t = &mcp.IOTransport{Reader: p.Stdout, Writer: p.Stdin}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "ioh-lsp", Version: c.m.opts.Version}, nil)
	sess, err := client.Connect(ctx, t, nil)
	if err != nil {
		err = c.explain(ctx, fmt.Errorf("initialize: %w", err))
		c.dropLocked()
		return err
	}
	c.sess = sess
	var listed []*mcp.Tool
	for tool, err := range sess.Tools(ctx, nil) {
		if err != nil {
			err = c.explain(ctx, fmt.Errorf("list tools: %w", err))
			c.dropLocked()
			return err
		}
		listed = append(listed, tool)
	}
	c.tools = listed
	return nil
}

// explain adds how a stdio server ended to err, when it has.
func (c *conn) explain(ctx context.Context, err error) error {
	if c.proc == nil {
		if ctx.Err() != nil {
			return fmt.Errorf("no answer within %s: %w", StartTimeout, err)
		}
		return err
	}
	if ctx.Err() != nil {
		return fmt.Errorf("no answer within %s (the server was stopped): %w", StartTimeout, err)
	}
	// The stream closed: the process is ending; give the sandbox a moment
	// to report how.
	t := time.NewTimer(closeWait)
	defer t.Stop()
	select {
	case <-c.proc.Done:
		return fmt.Errorf("%w (%s)", err, ended(c.proc))
	case <-t.C:
		return err
	}
}

// ended describes how a process ended: exit code or signal, the tier it
// ran under and the tail of its standard error.
func ended(p *contain.Process) string {
	res, rerr := p.Result()
	if res == nil {
		if rerr != nil {
			return "it could not run: " + rerr.Error()
		}
		return "it ended"
	}
	var b strings.Builder
	switch {
	case res.CapHit != "":
		fmt.Fprintf(&b, "the server was killed: %s limit hit", res.CapHit)
	case res.Signal != "":
		fmt.Fprintf(&b, "the server was killed by %s", res.Signal)
	default:
		fmt.Fprintf(&b, "the server exited with code %d", res.ExitCode)
	}
	b.WriteString("; " + res.Containment())
	if tail := strings.TrimSpace(string(res.Output)); tail != "" {
		if len(tail) > 1000 {
			tail = "…" + tail[len(tail)-1000:]
		}
		b.WriteString("; its stderr ends: " + tail)
	}
	return b.String()
}
