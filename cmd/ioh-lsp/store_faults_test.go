//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/trace"
)

// TestStoreFaults runs the binary against a trace store under faults: a
// killed run shows as interrupted (CLI and editor) once its lease is free,
// and a corrupt database is moved aside loudly.
func TestStoreFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs it")
	}
	bin := buildBinary(t)
	t.Run("killed run shows as interrupted", func(t *testing.T) { testKilledRunInterrupted(t, bin) })
	t.Run("corrupt database moved aside", func(t *testing.T) { testCorruptStoreCLI(t, bin) })
}

// faultTask is crashTask without a dollar budget (the replay provider's
// model has no price, and a dollar budget on an unpriced model does not
// start).
const faultTask = `version: 1
goal: "add a line"
verify:
  checks:
    - name: added
      shell: "sleep 0.3; grep -q added main.go"
budget:
  cost_usd: 0
model:
  provider: replay
  cassette: cassette.json
`

// newFaultWorkspace is newCrashWorkspace with faultTask.
func newFaultWorkspace(t *testing.T) (dir string, env []string) {
	t.Helper()
	dir, env = newCrashWorkspace(t)
	if err := os.WriteFile(filepath.Join(dir, "task.ioh.yaml"), []byte(faultTask), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, env
}

// startRun starts `ioh-lsp run --json` and returns the command, a reader
// of its events and its stderr (read it after Wait).
func startRun(t *testing.T, bin, dir string, env []string) (*exec.Cmd, *bufio.Scanner, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(bin, "run", "task.ioh.yaml", "--approve", "never", "--json")
	cmd.Dir, cmd.Env = dir, env
	errb := new(bytes.Buffer)
	cmd.Stderr = errb
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("run stderr:\n%s", errb.String())
		}
	})
	return cmd, bufio.NewScanner(stdout), errb
}

// awaitEvent reads events until the n-th of type typ; it returns the run id.
func awaitEvent(t *testing.T, sc *bufio.Scanner, typ string, n int) string {
	t.Helper()
	id, seen := "", 0
	for sc.Scan() {
		var ev map[string]any
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		if id == "" {
			id, _ = ev["run"].(string)
		}
		if ev["type"] == typ {
			if seen++; seen == n {
				return id
			}
		}
	}
	t.Fatalf("the run ended before %s #%d", typ, n)
	return ""
}

// awaitShown polls `runs --json` until run id shows outcome (each poll is
// a fresh process reading the store; the deadline only bounds a hang).
func awaitShown(t *testing.T, bin, dir string, env []string, id, outcome string) runEnd {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		got := finalState(t, bin, dir, env, id)
		if got.outcome == outcome {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s still shows %q, want %q", id, got.outcome, outcome)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// testKilledRunInterrupted: a run whose process stops (SIGSTOP: alive, but
// no longer renewing its lease) shows as interrupted once the lease
// (IOH_LEASE_TTL=2s) expires; killed (SIGKILL), it stays interrupted. A
// server that starts lists it in ioh.runs and offers Resume as a code
// lens, resumes nothing on its own, and `resume` then finishes it (its
// verified change left pending: --approve never).
func testKilledRunInterrupted(t *testing.T, bin string) {
	dir, env := newFaultWorkspace(t)
	env = append(env, trace.LeaseTTLEnv+"=2s")
	cmd, sc, _ := startRun(t, bin, dir, env)
	id := awaitEvent(t, sc, "budget", 2)
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// Alive but silent: the lease expires and nothing else frees it.
	stopped := awaitShown(t, bin, dir, env, id, "interrupted")
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	killed := finalState(t, bin, dir, env, id)
	if killed.outcome != "interrupted" || killed.steps < stopped.steps {
		t.Fatalf("after the kill: %+v", killed)
	}
	// The text listing offers the resume.
	runs := exec.Command(bin, "runs")
	runs.Dir, runs.Env = dir, env
	out, err := runs.Output()
	if err != nil || !strings.Contains(string(out), "ioh-lsp resume "+id) {
		t.Errorf("runs does not offer the resume (%v):\n%s", err, out)
	}

	// A server that starts lists it, offers Resume, and resumes nothing.
	lsp := startServer(t, bin, dir, env)
	var infos []struct {
		RunID   string `json:"runId"`
		Outcome string `json:"outcome"`
		Steps   int    `json:"steps"`
	}
	lsp.call(t, "workspace/executeCommand", map[string]any{"command": "ioh.runs", "arguments": []any{map[string]any{}}}, &infos)
	found := false
	for _, r := range infos {
		if r.RunID == id {
			found = true
			if r.Outcome != "interrupted" {
				t.Errorf("ioh.runs shows %s as %q, want interrupted", id, r.Outcome)
			}
		}
	}
	if !found {
		t.Errorf("ioh.runs does not list %s: %+v", id, infos)
	}
	var lenses []struct {
		Command struct {
			Title     string            `json:"title"`
			Command   string            `json:"command"`
			Arguments []json.RawMessage `json:"arguments"`
		} `json:"command"`
	}
	taskURI := "file://" + filepath.Join(dir, "task.ioh.yaml")
	lsp.call(t, "textDocument/codeLens", map[string]any{"textDocument": map[string]string{"uri": taskURI}}, &lenses)
	offered := false
	for _, l := range lenses {
		if l.Command.Command == "ioh.resume" && strings.Contains(l.Command.Title, id) && len(l.Command.Arguments) == 1 &&
			strings.Contains(string(l.Command.Arguments[0]), id) {
			offered = true
		}
	}
	if !offered {
		t.Errorf("no Resume code lens for %s: %+v", id, lenses)
	}
	lsp.close(t)
	if after := finalState(t, bin, dir, env, id); after.outcome != "interrupted" || after.steps != killed.steps || after.tokens != killed.tokens {
		t.Errorf("the server touched the interrupted run: %+v, was %+v", after, killed)
	}

	res := exec.Command(bin, "resume", id, "--approve", "never")
	res.Dir, res.Env = dir, env
	if out, err := res.CombinedOutput(); err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	if got := finalState(t, bin, dir, env, id); got.outcome != "awaiting_approval" || got.steps <= killed.steps {
		t.Errorf("after resume: %+v", got)
	}
}

// testCorruptStoreCLI: a scribbled trace database does not break the
// commands; `runs` says loudly where the old file went and lists nothing.
func testCorruptStoreCLI(t *testing.T, bin string) {
	dir, env := newFaultWorkspace(t)
	run := exec.Command(bin, "run", "task.ioh.yaml", "--approve", "never", "--json")
	run.Dir, run.Env = dir, env
	out, err := run.Output()
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	id := runIDOf(t, out)
	state := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "IOH_STATE_DIR="); ok {
			state = v
		}
	}
	dbs, _ := filepath.Glob(filepath.Join(state, "*.db"))
	if len(dbs) != 1 {
		t.Fatalf("databases %v", dbs)
	}
	f, err := os.OpenFile(dbs[0], os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt(bytes.Repeat([]byte{0x5a}, 64), 0)
	f.Close()
	runs := exec.Command(bin, "runs", "--json")
	runs.Dir, runs.Env = dir, env
	var errb bytes.Buffer
	runs.Stderr = &errb
	out, err = runs.Output()
	if err != nil {
		t.Fatalf("runs on a corrupt store: %v\n%s", err, errb.String())
	}
	moved, _ := filepath.Glob(dbs[0] + ".corrupt-*")
	if len(moved) != 1 {
		t.Fatalf("moved aside: %v", moved)
	}
	msg := errb.String()
	if !strings.Contains(msg, "WARNING") || !strings.Contains(msg, moved[0]) || !strings.Contains(msg, "corrupt") {
		t.Errorf("stderr does not say what happened and where the old file is:\n%s", msg)
	}
	if strings.Contains(string(out), id) {
		t.Errorf("the fresh store lists the old run: %s", out)
	}
	// The second command finds a healthy store and says nothing.
	again := exec.Command(bin, "runs")
	again.Dir, again.Env = dir, env
	errb.Reset()
	again.Stderr = &errb
	if err := again.Run(); err != nil || errb.Len() > 0 {
		t.Errorf("second runs: %v, stderr %q", err, errb.String())
	}

	// The editor is told too: a truncated store, then a server whose
	// first command opens it shows a warning naming the moved file.
	if err := os.Truncate(dbs[0], 100); err != nil {
		t.Fatal(err)
	}
	lsp := startServer(t, bin, dir, env)
	lsp.call(t, "workspace/executeCommand", map[string]any{"command": "ioh.runs", "arguments": []any{map[string]any{}}}, nil)
	lsp.close(t)
	moved, _ = filepath.Glob(dbs[0] + ".corrupt-*")
	if len(moved) != 2 {
		t.Fatalf("moved aside after the second damage: %v", moved)
	}
	warned := false
	for _, n := range lsp.notes {
		var p struct {
			Type    int    `json:"type"`
			Message string `json:"message"`
		}
		json.Unmarshal(n.Params, &p)
		if n.Method == "window/showMessage" && p.Type == 2 && strings.Contains(p.Message, "corrupt") &&
			(strings.Contains(p.Message, moved[0]) || strings.Contains(p.Message, moved[1])) {
			warned = true
		}
	}
	if !warned {
		t.Errorf("no window/showMessage warning naming the moved file; notifications: %+v", lsp.notes)
	}
}

// lspConn is a minimal LSP client over a child's stdio.
type lspConn struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Reader
	id    int
	notes []lspNote // notifications from the server, in order
}

type lspNote struct {
	Method string
	Params json.RawMessage
}

func startServer(t *testing.T, bin, dir string, env []string) *lspConn {
	t.Helper()
	cmd := exec.Command(bin, "serve")
	cmd.Dir, cmd.Env = dir, env
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &lspConn{cmd: cmd, in: in, out: bufio.NewReader(out)}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	uri := "file://" + dir
	c.call(t, "initialize", map[string]any{"processId": nil, "rootUri": uri, "capabilities": map[string]any{},
		"workspaceFolders": []any{map[string]string{"uri": uri, "name": "w"}}}, nil)
	c.send(t, map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
	return c
}

func (c *lspConn) send(t *testing.T, msg any) {
	t.Helper()
	b, _ := json.Marshal(msg)
	if _, err := fmt.Fprintf(c.in, "Content-Length: %d\r\n\r\n%s", len(b), b); err != nil {
		t.Fatalf("write to the server: %v", err)
	}
}

func (c *lspConn) read(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	n := 0
	for {
		line, err := c.out.ReadString('\n')
		if err != nil {
			t.Fatalf("read from the server: %v", err)
		}
		line = strings.TrimSpace(line)
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			fmt.Sscan(v, &n)
		}
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(c.out, b); err != nil {
		t.Fatalf("read from the server: %v", err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("server sent %q: %v", b, err)
	}
	return m
}

// call sends a request and waits for its answer, answering the server's
// own requests (configuration, registrations, progress) on the way.
func (c *lspConn) call(t *testing.T, method string, params, result any) {
	t.Helper()
	c.id++
	c.send(t, map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	done := make(chan struct{})
	timer := time.AfterFunc(time.Minute, func() {
		select {
		case <-done:
		default:
			c.cmd.Process.Kill() // unblocks the read below
		}
	})
	defer func() { close(done); timer.Stop() }()
	for {
		m := c.read(t)
		if mth, ok := m["method"]; ok {
			if id, ok := m["id"]; ok { // a request to the client
				var res any
				if string(mth) == `"workspace/configuration"` {
					var p struct{ Items []any }
					json.Unmarshal(m["params"], &p)
					res = make([]any, len(p.Items))
				}
				c.send(t, map[string]any{"jsonrpc": "2.0", "id": id, "result": res})
			} else {
				var name string
				json.Unmarshal(mth, &name)
				c.notes = append(c.notes, lspNote{name, m["params"]})
			}
			continue
		}
		if string(m["id"]) != fmt.Sprint(c.id) {
			continue
		}
		if e, ok := m["error"]; ok {
			t.Fatalf("%s: %s", method, e)
		}
		if result != nil {
			if err := json.Unmarshal(m["result"], result); err != nil {
				t.Fatalf("%s result %s: %v", method, m["result"], err)
			}
		}
		return
	}
}

func (c *lspConn) close(t *testing.T) {
	t.Helper()
	c.call(t, "shutdown", nil, nil)
	c.send(t, map[string]any{"jsonrpc": "2.0", "method": "exit"})
	c.in.Close()
	c.cmd.Wait()
}

// exitInterrupted is the exit code of a run the trace store interrupted.
var exitInterrupted = agent.OutcomeInterrupted.ExitCode()
