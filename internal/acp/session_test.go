package acp

import (
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func fileURI(p string) string { return (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String() }

func TestPromptBecomesAContract(t *testing.T) {
	root := testRoot(t)
	dir := root.Dir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	task := filepath.Join(dir, "fix.ioh.yaml")
	if err := os.WriteFile(task, []byte("version: 1\ngoal: from the file\nverify:\n  checks:\n    - { name: c, run: [\"true\"] }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.ioh.yaml")
	if err := os.WriteFile(bad, []byte("version: 1\ngoal: x\nbogus: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	outsideTask := filepath.Join(t.TempDir(), "other.ioh.yaml")
	if err := os.WriteFile(outsideTask, []byte("version: 1\ngoal: elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A task file in the workspace that is a symlink to one outside it
	// names a file the run would read from elsewhere.
	linkedTask := filepath.Join(dir, "linked.ioh.yaml")
	if err := os.Symlink(outsideTask, linkedTask); err != nil {
		t.Fatal(err)
	}
	ss := &session{eng: &Engine{Root: root}}

	c, err := ss.contract([]contentBlock{textBlock("Fix the bug"), {Type: "resource_link", URI: fileURI(filepath.Join(dir, "a.go")), Name: "a.go"}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Goal != "Fix the bug" || !reflect.DeepEqual(c.Context, []string{"a.go"}) || len(c.Verify.Checks) != 1 || !reflect.DeepEqual(c.Verify.Checks[0].Run, []string{"go", "test", "./..."}) {
		t.Errorf("text prompt: goal %q context %v checks %+v", c.Goal, c.Context, c.Verify.Checks)
	}

	c, err = ss.contract([]contentBlock{textBlock("ignored next to a task"), {Type: "resource_link", URI: fileURI(task), Name: "fix.ioh.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Goal != "from the file" || c.Verify.Checks[0].Name != "c" {
		t.Errorf("task file prompt: %+v", c)
	}

	for name, blocks := range map[string][]contentBlock{
		"empty":            nil,
		"bad task file":    {{Type: "resource_link", URI: fileURI(bad), Name: "bad"}},
		"outside task":     {{Type: "resource_link", URI: fileURI(outsideTask), Name: "t"}},
		"linked task":      {{Type: "resource_link", URI: fileURI(linkedTask), Name: "t"}},
		"outside link":     {textBlock("x"), {Type: "resource_link", URI: fileURI(filepath.Join(filepath.Dir(dir), "elsewhere.go")), Name: "e"}},
		"http link":        {textBlock("x"), {Type: "resource_link", URI: "https://example.com/a.go", Name: "e"}},
		"remote file link": {textBlock("x"), {Type: "resource_link", URI: "file://host/a.go", Name: "e"}},
		"image":            {{Type: "image"}},
	} {
		_, err := ss.contract(blocks)
		var re *RPCError
		if !errors.As(err, &re) || re.Code != codeInvalidParams {
			t.Errorf("%s: got %v, want an invalid-params error", name, err)
		}
	}
}

func TestIndexKeepsSessionsWhole(t *testing.T) {
	dir := t.TempDir()
	x := newIndex(dir, func(s string) string { return strings.ReplaceAll(s, "sk-secret-1", "[redacted]") })
	a := &record{SessionID: "s-00000000000000aa", CWD: "/w/a", Runs: []string{"r-1"}, Created: now(), Updated: now(),
		Title: "use key sk-secret-1", MCPServers: []json.RawMessage{json.RawMessage(`{"name":"gh","command":"gh-mcp","args":[],"env":[{"name":"GITHUB_TOKEN","value":"ghp_secret2"}]}`)}}
	b := &record{SessionID: "s-00000000000000bb", CWD: "/w/b", Runs: []string{}, Created: now(), Updated: now().Add(1e9)}
	for _, r := range []*record{a, b} {
		if err := x.put(r); err != nil {
			t.Fatal(err)
		}
	}
	// Neither the configured secret in the title nor the MCP server's
	// credentials reach the state directory.
	raw, err := os.ReadFile(filepath.Join(dir, a.SessionID+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "sk-secret-1") || strings.Contains(string(raw), "ghp_secret2") || !strings.Contains(string(raw), `"gh"`) {
		t.Errorf("index file:\n%s", raw)
	}
	// A fresh index (a new process) reads them back.
	y := newIndex(dir, nil)
	got, err := y.get(a.SessionID)
	if err != nil || got.CWD != "/w/a" || !reflect.DeepEqual(got.Runs, []string{"r-1"}) {
		t.Fatalf("get: %+v, %v", got, err)
	}
	all, err := y.list("")
	if err != nil || len(all) != 2 || all[0].SessionID != b.SessionID {
		t.Fatalf("list, newest first: %+v, %v", all, err)
	}
	if only, _ := y.list("/w/a"); len(only) != 1 || only[0].SessionID != a.SessionID {
		t.Fatalf("list by cwd: %+v", only)
	}
	// Ids are checked before they name a file.
	for _, id := range []string{"../x", "s-../../etc", "", "s-XYZ"} {
		if _, err := y.get(id); !errors.Is(err, errNoSession) {
			t.Errorf("get(%q): %v", id, err)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}
}

func TestUnfinishedRunsSayHowToGoOn(t *testing.T) {
	for _, tc := range []struct{ shown, stored, want string }{
		{"interrupted", "running", "`ioh-lsp resume r-1`"},
		{"running", "running", "still running"},
		{"awaiting_approval", "awaiting_approval", "`ioh-lsp approve r-1`"},
		{"applied", "applied", ""},
	} {
		got := unfinished("r-1", tc.shown, tc.stored)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s/%s: %q", tc.shown, tc.stored, got)
		}
	}
}
