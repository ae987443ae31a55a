package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/protocol"

	"github.com/ioh-lsp/ioh-lsp/examples/demo"
	"github.com/ioh-lsp/ioh-lsp/internal/lsp/lspclient"
)

// cmdDemo is the embedded default: it copies the bundled example (a Go
// module with a failing test) to a temp dir, starts `ioh-lsp serve` as a
// child over stdio and drives it as an editor would, with the replay
// provider (no network, no API key): failing test → diagnostic → "Fix with
// agent" → run → sandboxed verification → applyEdit → diagnostics.
func cmdDemo(ctx context.Context, env *cliEnv, args []string) int {
	fs := newFlagSet("demo", env.stderr)
	keep := fs.Bool("keep", false, "keep the temporary project")
	verbose := fs.Bool("verbose", false, "show the server's log")
	timeout := fs.Duration("timeout", 2*time.Minute, "give up after `D`")
	pos, err := parseFlags(fs, args)
	if err == nil {
		err = wantArgs(pos, 0, 0)
	}
	if err != nil {
		return usageError(env, "demo", err)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	d := &demoRun{out: env.stdout, start: time.Now()}
	if err := d.run(ctx, *keep, *verbose, env.stderr); err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp demo: %v\n", err)
		if d.serverLog.Len() > 0 && !*verbose {
			fmt.Fprintf(env.stderr, "server log:\n%s", d.serverLog.String())
		}
		return exitFailed
	}
	return exitOK
}

type demoRun struct {
	out       io.Writer
	mu        sync.Mutex
	start     time.Time
	serverLog lockedBuffer
	layout    demo.Layout
	editor    *lspclient.Editor
	runID     string
}

// say prints one timestamped line of the story.
func (d *demoRun) say(format string, args ...any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	fmt.Fprintf(d.out, "[%5.2fs] %s\n", time.Since(d.start).Seconds(), fmt.Sprintf(format, args...))
}

// block prints an indented block.
func (d *demoRun) block(text string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		fmt.Fprintf(d.out, "          │ %s\n", l)
	}
}

func (d *demoRun) run(ctx context.Context, keep, verbose bool, stderr io.Writer) error {
	tmp, err := os.MkdirTemp("", "ioh-demo-")
	if err != nil {
		return fmt.Errorf("temp dir: %w", err)
	}
	if keep {
		d.say("project kept in %s", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	if d.layout, err = demo.Extract(tmp); err != nil {
		return err
	}
	d.say("example project copied to %s", d.layout.Project)

	// 1. The editor's test runner finds the failing test.
	out, passed, err := goTest(ctx, d.layout.Project)
	if err != nil {
		return err
	}
	if passed {
		return errors.New("the example's test already passes; nothing to fix")
	}
	fails := parseGoTestFailures(out)
	if len(fails) == 0 {
		return fmt.Errorf("go test failed without a file:line failure:\n%s", out)
	}
	d.say("go test -count=1 ./... FAILS before the fix:")
	d.block(strings.TrimSpace(out))

	// 2. Start the real server as a child over stdio.
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own binary: %w", err)
	}
	// The sandboxed verification reads the user's Go build cache (read-only
	// inside the sandbox: see internal/wire) and builds offline.
	gocache, err := goEnv(ctx, "GOCACHE")
	if err != nil {
		return err
	}
	configHome, err := demoUserConfig(tmp, d.layout.Cassette)
	if err != nil {
		return err
	}
	child := exec.CommandContext(ctx, exe, "serve")
	child.Dir = d.layout.Project
	child.Env = append(os.Environ(), "IOH_STATE_DIR="+filepath.Join(tmp, "state"), "XDG_CONFIG_HOME="+configHome,
		"GOCACHE="+gocache, "GOFLAGS=", "GOTOOLCHAIN=local", "GOPROXY=off")
	if verbose {
		child.Stderr = stderr
	} else {
		child.Stderr = &d.serverLog
	}
	stdin, err := child.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		return err
	}
	if err := child.Start(); err != nil {
		return fmt.Errorf("start server: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	defer func() {
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = child.Process.Kill()
			<-exited
		}
	}()
	d.say("started `ioh-lsp serve` (pid %d) over stdio", child.Process.Pid)

	caps := lspclient.FullCapabilities()
	d.editor, err = lspclient.Connect(ctx, pipeRWC{stdout, stdin}, lspclient.Config{
		Root: d.layout.Project, Capabilities: &caps,
		Hooks: lspclient.Hooks{OnNotify: d.onNotify, ApplyEdit: d.onApplyEdit},
	})
	if err != nil {
		return err
	}
	defer d.editor.Close()
	d.say("initialized: server %q", d.editor.InitializeResult().ServerInfo.Name)

	if err := d.fix(ctx, fails[0]); err != nil {
		return err
	}

	// 6. The test passes now, on the real workspace.
	out, passed, err = goTest(ctx, d.layout.Project)
	if err != nil {
		return err
	}
	if !passed {
		return fmt.Errorf("go test still fails after the fix:\n%s", out)
	}
	d.say("go test -count=1 ./... PASSES after the fix, on the real workspace:")
	d.block(strings.TrimSpace(out))

	if err := d.editor.Shutdown(ctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	_ = d.editor.Close() // the editor closes the pipes after exit
	select {
	case err := <-exited:
		exited <- err
		if err != nil {
			return fmt.Errorf("server exit: %w", err)
		}
	case <-ctx.Done():
		return fmt.Errorf("server did not exit: %w", ctx.Err())
	}
	d.say("server shut down cleanly; demo done in %.1fs", time.Since(d.start).Seconds())
	return nil
}

// fix opens the failing test, asks for code actions on its diagnostic and
// runs "Fix with agent", then waits for the run and its diagnostics.
func (d *demoRun) fix(ctx context.Context, f goFailure) error {
	e := d.editor
	if err := e.OpenFile(ctx, f.file); err != nil {
		return err
	}
	if err := e.OpenFile(ctx, d.layout.File); err != nil {
		return err
	}
	line := uint32(f.line - 1)
	text, _ := e.Text(f.file)
	lines := strings.Split(text, "\n")
	width := uint32(0)
	if int(line) < len(lines) {
		width = uint32(len(lines[line]))
	}
	diag := protocol.Diagnostic{
		Range:    protocol.Range{Start: protocol.Position{Line: line}, End: protocol.Position{Line: line, Character: width}},
		Severity: protocol.DiagnosticSeverityError,
		Source:   protocol.NewOptional("go test"),
		Message:  protocol.String(f.message),
	}
	d.say("diagnostic (go test) %s:%d: %s", f.file, f.line, f.message)
	actions, err := e.CodeActions(ctx, f.file, diag.Range, []protocol.Diagnostic{diag})
	if err != nil {
		return fmt.Errorf("code actions: %w", err)
	}
	var titles []string
	for _, a := range actions {
		titles = append(titles, fmt.Sprintf("%q", a.Title))
	}
	d.say("code actions offered: %s", strings.Join(titles, ", "))
	fixAction, ok := lspclient.FindAction(actions, "Fix with agent")
	if !ok {
		return errors.New("no \"Fix with agent\" action")
	}
	raw, err := e.ApplyCodeAction(ctx, fixAction)
	if err != nil {
		return fmt.Errorf("execute %q: %w", fixAction.Title, err)
	}
	var ref struct {
		RunID string `json:"runId"`
	}
	if err := json.Unmarshal(raw, &ref); err != nil || ref.RunID == "" {
		return fmt.Errorf("fix with agent answered %s", raw)
	}
	d.mu.Lock()
	d.runID = ref.RunID
	d.mu.Unlock()
	d.say("chose %q → run %s started in the background", fixAction.Title, ref.RunID)

	token := "ioh/" + ref.RunID
	st, err := e.Await(ctx, "the run's progress to end", func(s lspclient.State) bool {
		_, ok := lspclient.ProgressEnded(s, token)
		return ok
	})
	if err != nil {
		return err
	}
	end, _ := lspclient.ProgressEnded(st, token)
	if !strings.HasPrefix(end, "completed: applied") {
		return fmt.Errorf("run did not end applied: %s", end)
	}
	srcURI := e.URI(d.layout.File)
	_, err = e.Await(ctx, "the edit's trace diagnostic", func(s lspclient.State) bool {
		for _, dg := range s.Diagnostics[srcURI] {
			if src, _ := dg.Source.Get(); src == "ioh" {
				return true
			}
		}
		return false
	})
	if err != nil {
		return err
	}
	// The run's trace, rendered by the server: the verification section.
	raw, err = e.ExecuteCommand(ctx, "ioh.trace", map[string]string{"runId": ref.RunID})
	if err != nil {
		return fmt.Errorf("ioh.trace: %w", err)
	}
	var sum struct {
		Outcome string  `json:"outcome"`
		Steps   int     `json:"steps"`
		Tokens  int64   `json:"tokens"`
		Cost    float64 `json:"costUsd"`
		File    string  `json:"file"`
	}
	if err := json.Unmarshal(raw, &sum); err != nil {
		return fmt.Errorf("ioh.trace answered %s", raw)
	}
	d.say("ioh.trace: outcome %s, %d steps, %d tokens, $%.4f; rendered trace %s", sum.Outcome, sum.Steps, sum.Tokens, sum.Cost, sum.File)
	return nil
}

// onNotify prints what the server sends, as it arrives.
func (d *demoRun) onNotify(method string, params any) {
	switch p := params.(type) {
	case *lspclient.Progress:
		switch p.Kind {
		case "begin":
			d.say("progress begin: %s", p.Title)
		case "report":
			d.say("progress: %s", p.Message)
		case "end":
			d.say("progress end: %s", p.Message)
		}
	case *protocol.PublishDiagnosticsParams:
		rel, _ := filepath.Rel(d.layout.Project, p.URI.FsPath())
		if len(p.Diagnostics) == 0 {
			d.say("diagnostics cleared on %s", rel)
		}
		for _, dg := range p.Diagnostics {
			msg := ""
			if s, ok := dg.Message.(protocol.String); ok {
				msg = string(s)
			}
			d.say("diagnostic on %s:%d [%s]: %s", rel, dg.Range.Start.Line+1, severityName(dg.Severity), msg)
		}
	case *protocol.ShowMessageParams:
		d.say("message: %s", p.Message)
	case *protocol.ShowMessageRequestParams:
		d.say("question: %s", p.Message)
	case *protocol.ShowDocumentParams:
		d.say("show document: %s", p.URI.FsPath())
	}
}

// onApplyEdit is the user reviewing the one workspace edit: it prints the
// diff and the annotation groups, approves every group and applies it.
func (d *demoRun) onApplyEdit(ctx context.Context, p *protocol.ApplyWorkspaceEditParams) (*protocol.ApplyWorkspaceEditResult, error) {
	label := ""
	if p.Label != nil {
		label = *p.Label
	}
	d.say("workspace/applyEdit %q arrives for review", label)
	d.mu.Lock()
	run := d.runID
	d.mu.Unlock()
	if run != "" {
		if raw, err := d.editor.ExecuteCommand(ctx, "ioh.showDiff", map[string]string{"runId": run}); err == nil {
			var r struct {
				Diff string `json:"diff"`
			}
			if json.Unmarshal(raw, &r) == nil && r.Diff != "" {
				d.say("the proposed (already verified) change:")
				d.block(r.Diff)
			}
		}
	}
	for id, a := range p.Edit.ChangeAnnotations {
		confirm := a.NeedsConfirmation != nil && *a.NeedsConfirmation
		desc := ""
		if a.Description != nil {
			desc = *a.Description
		}
		d.say("review group %q (%s, needs confirmation: %v): %s", a.Label, id, confirm, desc)
	}
	res := d.editor.Apply(ctx, p.Edit)
	if res.Applied {
		d.say("approved: edit applied in the editor")
		saved, err := d.editor.SaveAll(ctx)
		if err != nil {
			msg := err.Error()
			return &protocol.ApplyWorkspaceEditResult{Applied: false, FailureReason: &msg}, nil
		}
		if len(saved) > 0 {
			d.say("saved %s", strings.Join(saved, ", "))
		}
	} else {
		d.say("edit NOT applied: %s", deref(res.FailureReason))
	}
	return res, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func severityName(s protocol.DiagnosticSeverity) string {
	switch s {
	case protocol.DiagnosticSeverityError:
		return "error"
	case protocol.DiagnosticSeverityWarning:
		return "warning"
	case protocol.DiagnosticSeverityInformation:
		return "info"
	}
	return "hint"
}

// goTest runs `go test ./...` in dir, offline.
func goTest(ctx context.Context, dir string) (string, bool, error) {
	cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOTOOLCHAIN=local", "GOPROXY=off")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(out), true, nil
	case errors.As(err, &exit):
		return string(out), false, nil
	}
	return "", false, fmt.Errorf("run go test: %w", err)
}

// goEnv reads one `go env` value.
func goEnv(ctx context.Context, key string) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", key).Output()
	if err != nil {
		return "", fmt.Errorf("go env %s: %w", key, err)
	}
	v := strings.TrimSpace(string(out))
	if v == "" || v == "off" {
		return "", fmt.Errorf("go env %s is %q; the demo needs a build cache", key, v)
	}
	return v, nil
}

type goFailure struct {
	file    string
	line    int
	message string
}

// goFailureLine compiles on first use, not in package init (internal/archtest).
var goFailureLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s+([\w./-]+\.go):(\d+): (.*)$`) })

// parseGoTestFailures finds "    file_test.go:12: message" lines.
func parseGoTestFailures(out string) []goFailure {
	var fs []goFailure
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		m := goFailureLine().FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		fs = append(fs, goFailure{file: m[1], line: n, message: m[3]})
	}
	return fs
}

// pipeRWC joins the child's stdout and stdin into one stream.
type pipeRWC struct {
	io.ReadCloser
	w io.WriteCloser
}

func (p pipeRWC) Write(b []byte) (int, error) { return p.w.Write(b) }

func (p pipeRWC) Close() error {
	werr := p.w.Close()
	rerr := p.ReadCloser.Close()
	return errors.Join(werr, rerr)
}

// lockedBuffer collects the child's stderr.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Len()
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// demoUserConfig writes the demo server's own user configuration under tmp
// and returns the directory for its XDG_CONFIG_HOME: the replay provider
// and the bundled cassette are chosen where a user chooses an endpoint (the
// user config), since editor settings of a workspace that is not trusted
// may come from the repository and cannot choose one.
func demoUserConfig(tmp, cassette string) (string, error) {
	home := filepath.Join(tmp, "config")
	dir := filepath.Join(home, "ioh")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	cfg := "model:\n  provider: replay\n  name: demo-cassette\n  cassette: " + strconv.Quote(cassette) + "\n"
	return home, os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(cfg), 0o600)
}
