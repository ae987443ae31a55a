package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

func mustRoot(t *testing.T, dir string) *workspace.Root {
	t.Helper()
	r, err := workspace.NewRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// treeOf lists every entry under dir (the symlinks' targets, the files'
// contents), to compare a workspace before and after.
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "-> " + target
		case d.IsDir():
			out[rel+"/"] = ""
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(a, b map[string]string) string {
	var diff []string
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			diff = append(diff, fmt.Sprintf("%s: %q -> %q", k, v, b[k]))
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			diff = append(diff, fmt.Sprintf("%s: new %q", k, b[k]))
		}
	}
	sort.Strings(diff)
	return strings.Join(diff, "\n")
}

// hostileWorkspace is a workspace with a symlink to a directory outside
// it and a cassette that tries every way out: a command writing inside
// and outside the workspace and to a file the change also edits, a write
// through "..", an absolute write and a write through the symlink; then
// a legitimate edit and a new file, and finish.
func hostileWorkspace(t *testing.T) (ws, outside, task, cassette string) {
	t.Helper()
	ws, outside = t.TempDir(), t.TempDir()
	task = filepath.Join(ws, "fix.ioh.yaml")
	cassette = filepath.Join(t.TempDir(), "cassette.json")
	if err := os.Symlink(outside, filepath.Join(ws, "escape")); err != nil {
		t.Fatal(err)
	}
	shell := fmt.Sprintf("echo pwned > pwned.txt; echo pwned > '%s/by-run.txt'; echo appended >> stats.go", outside)
	turns := []map[string]any{
		{"tool_calls": []any{map[string]any{"name": "run", "arguments": map[string]any{"shell": shell}}}},
		{"tool_calls": []any{map[string]any{"name": "write_file", "arguments": map[string]any{"path": "../dotdot.txt", "content": "x\n"}}}},
		{"tool_calls": []any{map[string]any{"name": "write_file", "arguments": map[string]any{"path": filepath.Join(outside, "absolute.txt"), "content": "x\n"}}}},
		{"tool_calls": []any{map[string]any{"name": "write_file", "arguments": map[string]any{"path": "escape/linked.txt", "content": "x\n"}}}},
		{"tool_calls": []any{map[string]any{"name": "edit_file", "arguments": map[string]any{"path": "stats.go", "old": "float64(len(xs)-1)", "new": "float64(len(xs))"}}}},
		{"tool_calls": []any{map[string]any{"name": "write_file", "arguments": map[string]any{"path": "new.txt", "content": "new\n"}}}},
		{"tool_calls": []any{map[string]any{"name": "finish", "arguments": map[string]any{"summary": "fixed"}}}},
	}
	for _, tu := range turns {
		tu["usage"] = map[string]any{"input_tokens": 100, "output_tokens": 10}
	}
	b, _ := json.Marshal(map[string]any{"version": 1, "turns": turns})
	files := map[string]string{
		filepath.Join(ws, "stats.go"): statsBefore,
		task:                          "version: 1\ngoal: Fix Mean\nverify:\n  checks:\n    - { name: divisor, run: [\"grep\", \"-q\", \"float64(len(xs))$\", \"stats.go\"] }\n",
		cassette:                      string(b),
	}
	for p, s := range files {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws, outside, task, cassette
}

// TestACPContainment is the ACP look, paired: a session whose model tries
// every way out of its cwd and to the disk before the permission answer,
// with a client that offers its file system and terminal. Attack: while
// the change's permission is pending, and after it is rejected, the
// workspace is exactly as it was and nothing appeared outside it; the
// command's writes (inside and outside) never land. Control: the same
// run allowed writes exactly the change (the edit and the new file). In
// both, the agent asks the client for nothing but permission: no fs/*
// and no terminal/* request, whatever the client's capabilities.
func TestACPContainment(t *testing.T) {
	for _, allow := range []bool{false, true} {
		name := map[bool]string{false: "rejected", true: "allowed_control"}[allow]
		t.Run(name, func(t *testing.T) {
			ws, outside, task, cassette := hostileWorkspace(t)
			before := treeOf(t, ws)
			var mu sync.Mutex
			var atAsk map[string]string
			c := newClient(t, cassette, func(p map[string]any) any {
				id := p["toolCall"].(map[string]any)["toolCallId"].(string)
				if !strings.HasSuffix(id, "/change") {
					return selected(optAllowOnce)
				}
				mu.Lock()
				atAsk = treeOf(t, ws)
				mu.Unlock()
				if allow {
					return selected(optAllowOnce)
				}
				return selected(optRejectOnce)
			})
			c.call(methodInitialize, map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{
				"fs": map[string]any{"readTextFile": true, "writeTextFile": true}, "terminal": true}})
			r := c.call(methodSessionNew, map[string]any{"cwd": ws, "mcpServers": []any{}})
			sid := r["result"].(map[string]any)["sessionId"].(string)
			r = c.call(methodSessionPrompt, taskPrompt(sid, task))
			if r["result"] == nil {
				t.Fatalf("prompt: %v", r)
			}
			mu.Lock()
			defer mu.Unlock()
			if atAsk == nil {
				t.Fatalf("the change was never offered; updates: %v", c.updates())
			}
			if d := sameTree(before, atAsk); d != "" {
				t.Errorf("the workspace changed before the permission answer:\n%s", d)
			}
			want := before
			if allow {
				want = treeOf(t, ws)
				if want["stats.go"] != statsAfter || want["new.txt"] != "new\n" {
					t.Errorf("after allow: stats.go %q, new.txt %q; want the edit and the new file", want["stats.go"], want["new.txt"])
				}
				want = map[string]string{}
				for k, v := range before {
					want[k] = v
				}
				want["stats.go"], want["new.txt"] = statsAfter, "new\n"
			}
			if d := sameTree(want, treeOf(t, ws)); d != "" {
				t.Errorf("the workspace after the answer is not the change alone:\n%s", d)
			}
			if d := sameTree(map[string]string{"./": ""}, treeOf(t, outside)); d != "" {
				t.Errorf("something was written outside the session's cwd:\n%s", d)
			}
			if _, err := os.Lstat(filepath.Join(filepath.Dir(ws), "dotdot.txt")); err == nil {
				t.Errorf("a write through .. landed next to the workspace")
			}
			ran := false
			for _, u := range c.updates() {
				// The permission's tool call is the command's (ask-1).
				// It fails: its write outside has no directory to go to.
				if id, _ := u["toolCallId"].(string); strings.HasSuffix(id, "/ask-1") && strings.Contains(fmt.Sprint(u["content"]), "sandbox: ") {
					ran = true
				}
			}
			if !ran {
				t.Errorf("the command did not run (allowed, it must run contained): %v", c.updates())
			}
			// Control of the containment: the same write uncontained lands.
			if err := os.WriteFile(filepath.Join(outside, "by-run.txt"), []byte("pwned\n"), 0o644); err != nil {
				t.Errorf("control: the test itself cannot write outside: %v", err)
			}
			c.mu.Lock()
			asked := append([]string(nil), c.asked...)
			c.mu.Unlock()
			for _, m := range asked {
				if m != methodRequestPermission {
					t.Errorf("the agent sent the client %s; it may only ask permission", m)
				}
			}
		})
	}
}

// TestACPSessionCwdTooWide: a session whose cwd is the file-system root
// or the home directory is refused before any engine is opened (nothing
// is created for it on disk), as `ioh-lsp run` refuses them; the control,
// a project directory below home, opens.
func TestACPSessionCwdTooWide(t *testing.T) {
	home := t.TempDir()
	project := filepath.Join(home, "project")
	if err := os.Mkdir(project, 0o755); err != nil {
		t.Fatal(err)
	}
	var opened []string
	srv := New(Options{Getenv: func(k string) string { return map[string]string{"HOME": home}[k] },
		NewEngine: func(_ context.Context, r EngineRequest) (*Engine, error) {
			opened = append(opened, r.Root)
			return &Engine{Root: mustRoot(t, r.Root)}, nil
		}})
	for _, cwd := range []string{"/", home, project + "/.."} {
		_, err := srv.newSession(context.Background(), json.RawMessage(fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, cwd)))
		var re *RPCError
		if !errors.As(err, &re) || re.Code != codeInvalidParams || !strings.Contains(re.Message, "workspace too wide") {
			t.Errorf("session/new cwd %s: %v, want invalid params naming the wide workspace", cwd, err)
		}
	}
	if _, err := srv.loadSession(context.Background(), json.RawMessage(fmt.Sprintf(`{"sessionId":"r-0123456789abcdef","cwd":%q,"mcpServers":[]}`, home)), false); err == nil || !strings.Contains(err.Error(), "workspace too wide") {
		t.Errorf("session/load in home: %v", err)
	}
	if len(opened) != 0 {
		t.Errorf("engines opened for refused cwds: %v", opened)
	}
	if _, err := srv.newSession(context.Background(), json.RawMessage(fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, project))); err != nil {
		t.Errorf("control: session/new in a project below home: %v", err)
	}
	if len(opened) != 1 {
		t.Errorf("control: engines opened %v", opened)
	}
}

// TestACPLoadBadIDOpensNothing: session/load of an id that is neither a
// session nor a run id of ours is refused before the workspace's engine
// (and its trace store) is made; the control, a well-formed run id, does
// open it to look the run up.
func TestACPLoadBadIDOpensNothing(t *testing.T) {
	ws := t.TempDir()
	var opened int
	srv := New(Options{NewEngine: func(_ context.Context, r EngineRequest) (*Engine, error) {
		opened++
		return nil, errors.New("no engine in this test")
	}})
	for _, id := range []string{"r-../../etc", "r-", "r-XYZ", "x-0123456789abcdef"} {
		if _, err := srv.loadSession(context.Background(), json.RawMessage(fmt.Sprintf(`{"sessionId":%q,"cwd":%q,"mcpServers":[]}`, id, ws)), false); err == nil {
			t.Errorf("session/load %q accepted", id)
		}
	}
	if opened != 0 {
		t.Errorf("%d engines opened for ids that name nothing", opened)
	}
	srv.loadSession(context.Background(), json.RawMessage(fmt.Sprintf(`{"sessionId":"r-0123456789abcdef","cwd":%q,"mcpServers":[]}`, ws)), false)
	if opened != 1 {
		t.Errorf("control: a run id opened %d engines, want 1", opened)
	}
}

// TestACPLinkedContextLeavingCwd: a prompt's resource link to a file in
// the cwd that is a symlink out of it is refused, judged as the run reads
// it; the control, a link to a file inside, becomes context.
func TestACPLinkedContextLeavingCwd(t *testing.T) {
	root := testRoot(t)
	dir := root.Dir()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(dir, "secret-link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "in.txt"), []byte("in\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ss := &session{eng: &Engine{Root: root}}
	for _, p := range []string{"escape/secret.txt", "secret-link.txt"} {
		_, err := ss.contract([]contentBlock{textBlock("x"), {Type: "resource_link", URI: fileURI(filepath.Join(dir, p)), Name: p}})
		var re *RPCError
		if !errors.As(err, &re) || re.Code != codeInvalidParams || !strings.Contains(re.Message, "outside the session's workspace") {
			t.Errorf("link %s: %v, want it refused as outside the workspace", p, err)
		}
	}
	c, err := ss.contract([]contentBlock{textBlock("x"), {Type: "resource_link", URI: fileURI(filepath.Join(dir, "in.txt")), Name: "in.txt"}})
	if err != nil || len(c.Context) != 1 || c.Context[0] != "in.txt" {
		t.Errorf("control: link inside: %v, %v", c, err)
	}
}
