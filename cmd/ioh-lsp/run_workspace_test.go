package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeTask is a replay task whose model writes hello.txt and finishes.
const (
	writeTask     = "version: 1\ngoal: write hello\nmodel: {cassette: c.json}\nverify: [{run: [\"true\"]}]\n"
	writeCassette = `{"version":1,"turns":[{"tool_calls":[{"name":"write_file","arguments":{"path":"hello.txt","content":"hi\n"}}]},{"tool_calls":[{"name":"finish","arguments":{"summary":"done"}}]}]}`
)

// TestRunWorkspace: `run FILE` works in the git root above
// FILE, else in the current directory (docs/cli.md); a workspace that would be
// the file-system root or the user's home directory itself is refused
// with exit 2 and the fix, and nothing is written there (QA: `cd / &&
// ioh-lsp run /tmp/x/sub/t.ioh.yaml` ran "in /"). The controls: the same
// task from a directory below HOME, or under a git root, runs and writes
// its file there.
func TestRunWorkspace(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "home")
	cwd := filepath.Join(base, "cwd")
	state := filepath.Join(base, "state")
	for _, d := range []string{home, cwd, state} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(cwd)
	getenv := func(k string) string {
		switch k {
		case "HOME":
			return home
		case "IOH_STATE_DIR":
			return state
		case "XDG_CONFIG_HOME":
			return filepath.Join(base, "config")
		case "PATH":
			return os.Getenv("PATH")
		}
		return ""
	}
	run := func(t *testing.T, taskDir string) (int, string) {
		t.Helper()
		if err := os.MkdirAll(taskDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, content := range map[string]string{"t.ioh.yaml": writeTask, "c.json": writeCassette} {
			if err := os.WriteFile(filepath.Join(taskDir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		var stdout, stderr bytes.Buffer
		env := &cliEnv{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: getenv}
		code := dispatch(ctx, env, []string{"run", filepath.Join(taskDir, "t.ioh.yaml"), "--approve", "auto"})
		return code, stdout.String() + stderr.String()
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }

	t.Run("no git root: the current directory", func(t *testing.T) {
		code, out := run(t, filepath.Join(cwd, "x", "sub")) // the cassette must lie in the workspace
		if code != 0 || !exists(filepath.Join(cwd, "hello.txt")) {
			t.Fatalf("exit %d, hello.txt in %s: %v; want 0 and written there\n%s", code, cwd, exists(filepath.Join(cwd, "hello.txt")), out)
		}
	})
	t.Run("the file-system root is refused", func(t *testing.T) {
		t.Chdir("/")
		code, out := run(t, filepath.Join(base, "y"))
		if code != exitUsage || !strings.Contains(out, "file-system root") || exists("/hello.txt") {
			t.Errorf("exit %d, output %q; want 2 naming the file-system root, nothing written", code, out)
		}
	})
	t.Run("git root above the task file", func(t *testing.T) {
		repo := filepath.Join(base, "repo")
		if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
		code, out := run(t, filepath.Join(repo, "tasks"))
		if code != 0 || !exists(filepath.Join(repo, "hello.txt")) {
			t.Fatalf("exit %d; want 0 and hello.txt at the git root\n%s", code, out)
		}
	})
	t.Run("the home directory is refused", func(t *testing.T) {
		t.Chdir(home)
		code, out := run(t, filepath.Join(base, "z"))
		if code != exitUsage || !strings.Contains(out, "your home directory") || !strings.Contains(out, "git init") {
			t.Errorf("exit %d, output %q; want 2 naming the home directory and the fix", code, out)
		}
		if exists(filepath.Join(home, "hello.txt")) {
			t.Errorf("the refused run wrote into HOME")
		}
		// The control: one directory down is a workspace of its own.
		proj := filepath.Join(home, "proj")
		if err := os.MkdirAll(proj, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Chdir(proj)
		if code, out := run(t, filepath.Join(proj, "z")); code != 0 || !exists(filepath.Join(proj, "hello.txt")) {
			t.Errorf("control under HOME: exit %d; want 0 and hello.txt in %s\n%s", code, proj, out)
		}
		// A git root at HOME itself is refused too.
		if err := os.Mkdir(filepath.Join(home, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
		if code, out := run(t, filepath.Join(home, "other")); code != exitUsage || !strings.Contains(out, "your home directory") {
			t.Errorf("git root at HOME: exit %d, output %q; want 2", code, out)
		}
	})
}

// TestRunStateDirNeverRelative: run from inside the workspace with a
// relative XDG_STATE_HOME, the trace database goes under HOME (the XDG
// spec ignores relative values), not into ./relst in the workspace; a
// relative IOH_STATE_DIR stops the run with an error naming it, before
// anything is created. The control: an absolute XDG_STATE_HOME holds the
// database.
func TestRunStateDirNeverRelative(t *testing.T) {
	base := t.TempDir()
	ws, home, abs := filepath.Join(base, "ws"), filepath.Join(base, "home"), filepath.Join(base, "xdgstate")
	for _, d := range []string{filepath.Join(ws, ".git"), home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range map[string]string{"t.ioh.yaml": writeTask, "c.json": writeCassette} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(ws)
	run := func(vars map[string]string) (int, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		var out bytes.Buffer
		getenv := func(k string) string {
			switch k {
			case "HOME":
				return home
			case "XDG_CONFIG_HOME":
				return filepath.Join(base, "config")
			case "PATH":
				return os.Getenv("PATH")
			}
			return vars[k]
		}
		env := &cliEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &out, getenv: getenv}
		return dispatch(ctx, env, []string{"run", "t.ioh.yaml", "--approve", "never"}), out.String()
	}
	dbs := func(dir string) []string { m, _ := filepath.Glob(filepath.Join(dir, "ws-*.db")); return m }

	if code, out := run(map[string]string{"XDG_STATE_HOME": "relst"}); code != 0 {
		t.Fatalf("relative XDG_STATE_HOME: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(ws, "relst")); err == nil {
		t.Errorf("relative XDG_STATE_HOME created relst inside the workspace")
	}
	if len(dbs(filepath.Join(home, ".local", "state", "ioh"))) != 1 {
		t.Errorf("relative XDG_STATE_HOME: no database under HOME/.local/state/ioh")
	}
	code, out := run(map[string]string{"IOH_STATE_DIR": "relst"})
	if code == 0 || !strings.Contains(out, `IOH_STATE_DIR="relst" is a relative path`) {
		t.Errorf("relative IOH_STATE_DIR: exit %d, output %q; want a failure naming it", code, out)
	}
	if _, err := os.Stat(filepath.Join(ws, "relst")); err == nil {
		t.Errorf("relative IOH_STATE_DIR created relst inside the workspace")
	}
	if code, out := run(map[string]string{"XDG_STATE_HOME": abs}); code != 0 || len(dbs(filepath.Join(abs, "ioh"))) != 1 {
		t.Errorf("control, absolute XDG_STATE_HOME: exit %d, databases %q\n%s", code, dbs(filepath.Join(abs, "ioh")), out)
	}
}

// TestRunScopeEntriesNeverWiden is QA's widening repro run for real:
// scope.write ["src/**", "docs/a,**"] used to be joined into
// !{src/**,docs/a,**}, whose third alternative "**" let the agent write
// top.txt. Now the write outside the scope is denied and the writes it
// names (the control) are applied.
func TestRunScopeEntriesNeverWiden(t *testing.T) {
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	task := "version: 1\ngoal: g\nscope: {write: [\"src/**\", \"docs/a,**\"]}\nmodel: {cassette: c.json}\nverify: [{run: [\"true\"]}]\n"
	cassette := `{"version":1,"turns":[` +
		`{"tool_calls":[{"name":"write_file","arguments":{"path":"top.txt","content":"outside\n"}}]},` +
		`{"tool_calls":[{"name":"write_file","arguments":{"path":"src/in.go","content":"package src\n"}}]},` +
		`{"tool_calls":[{"name":"write_file","arguments":{"path":"docs/a,b.md","content":"in\n"}}]},` +
		`{"tool_calls":[{"name":"finish","arguments":{"summary":"done"}}]}]}`
	for name, content := range map[string]string{"t.ioh.yaml": task, "c.json": cassette} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	getenv := func(k string) string {
		switch k {
		case "HOME":
			return filepath.Join(base, "home")
		case "IOH_STATE_DIR":
			return filepath.Join(base, "state")
		case "XDG_CONFIG_HOME":
			return filepath.Join(base, "config")
		case "PATH":
			return os.Getenv("PATH")
		}
		return ""
	}
	var out bytes.Buffer
	env := &cliEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &out, getenv: getenv}
	dispatch(ctx, env, []string{"run", filepath.Join(ws, "t.ioh.yaml"), "--approve", "auto"})
	if _, err := os.Stat(filepath.Join(ws, "top.txt")); err == nil {
		t.Errorf("top.txt, outside scope.write, was written\n%s", out.String())
	}
	if !strings.Contains(out.String(), "deny write top.txt") {
		t.Errorf("no denial of top.txt reported\n%s", out.String())
	}
	for _, p := range []string{"src/in.go", "docs/a,b.md"} {
		if _, err := os.Stat(filepath.Join(ws, p)); err != nil {
			t.Errorf("control: %s, inside scope.write, was not written: %v\n%s", p, err, out.String())
		}
	}
}
