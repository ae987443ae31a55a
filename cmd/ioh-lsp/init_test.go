package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
)

// TestStartCommandsBinary drives init, config, ask, undo, completion and man through the built
// binary in worlds of their own (HOME, XDG_CONFIG_HOME, state directory).
func TestStartCommandsBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	t.Run("init", func(t *testing.T) { testInit(t, bin) })
	t.Run("ask and undo", func(t *testing.T) { testAskUndo(t, bin) })
	t.Run("undo refuses overlapping edits", func(t *testing.T) { testUndoConflict(t, bin) })
	t.Run("undo after auto approval and of a pending change", func(t *testing.T) { testUndoAuto(t, bin) })
	t.Run("completion and man", func(t *testing.T) { testCompletion(t, bin) })
	t.Run("config", func(t *testing.T) { testConfig(t, bin) })
}

// testInit: the provider comes from the key in the environment, the
// starter task runs the detected check and parses as a contract; a second
// init refuses to overwrite, naming --force, and --force keeps a .bak.
// Control: with no key the user config is a commented template, which
// the config loader still reads.
func testInit(t *testing.T, bin string) {
	dir, env := firstHourWorkspace(t, "", "version: 1\ngoal: x\n", "OPENAI_API_KEY=sk-test")
	home := strings.TrimPrefix(env[1], "HOME=")
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stderr := runIn(t, bin, dir, env, "init")
	if code != 0 || !strings.Contains(stderr, "provider openai, because OPENAI_API_KEY is set") || !strings.Contains(stderr, "next: ") {
		t.Fatalf("init: exit %d\n%s", code, stderr)
	}
	userPath := filepath.Join(home, ".config", "ioh", "config.yaml")
	user, err := os.ReadFile(userPath)
	if err != nil || !strings.Contains(string(user), "provider: openai\n") {
		t.Fatalf("user config %q: %v", user, err)
	}
	taskPath := filepath.Join(dir, ".ioh", "tasks", "check.yaml")
	c, err := contract.Load(taskPath)
	if err != nil {
		t.Fatalf("the starter task does not parse: %v", err)
	}
	if len(c.Verify.Checks) != 1 || strings.Join(c.Verify.Checks[0].Run, " ") != "go test ./..." {
		t.Errorf("starter checks = %+v, want go test ./...", c.Verify.Checks)
	}

	os.WriteFile(userPath, []byte("# mine\n"), 0o644)
	code, stderr = runIn(t, bin, dir, env, "init")
	if code != 1 || !strings.Contains(stderr, userPath+" exists") || !strings.Contains(stderr, "--force") {
		t.Errorf("second init: exit %d, want 1 naming the file and --force\n%s", code, stderr)
	}
	if b, _ := os.ReadFile(userPath); string(b) != "# mine\n" {
		t.Errorf("second init changed the user config: %q", b)
	}
	code, stderr = runIn(t, bin, dir, env, "init", "--force")
	if b, _ := os.ReadFile(userPath + ".bak"); code != 0 || string(b) != "# mine\n" {
		t.Errorf("--force: exit %d, .bak %q\n%s", code, b, stderr)
	}

	dir, env = firstHourWorkspace(t, "", "version: 1\ngoal: x\n", "ANTHROPIC_API_KEY=sk-test")
	os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}`), 0o644)
	code, stderr = runIn(t, bin, dir, env, "init")
	if code != 0 || !strings.Contains(stderr, "runs npm test --silent") || !strings.Contains(stderr, "placeholder") {
		t.Errorf("init in an npm project with the placeholder test script: exit %d\n%s", code, stderr)
	}

	dir, env = firstHourWorkspace(t, "", "version: 1\ngoal: x\n")
	code, stderr = runIn(t, bin, dir, env, "init")
	if code != 0 || !strings.Contains(stderr, "commented template") || !strings.Contains(stderr, "no checks detected") {
		t.Fatalf("init without keys: exit %d\n%s", code, stderr)
	}
	code, stderr = runIn(t, bin, dir, env, "run", ".ioh/tasks/check.yaml", "--approve", "never")
	if code != 2 || !strings.Contains(stderr, "provider") {
		t.Errorf("a run under the template: exit %d, want 2 naming the provider\n%s", code, stderr)
	}
}

// goProject is a git-rooted Go module with one passing test, the cassette
// askCassette, and a world of its own.
func goProject(t *testing.T) (dir string, env []string) {
	dir, env = firstHourWorkspace(t, "", "version: 1\ngoal: x\n")
	for name, body := range map[string]string{
		"go.mod":        "module example.com/x\n\ngo 1.22\n",
		"x.go":          "package x\n\n// one\n// two\n// three\n// four\n// end\n",
		"x_test.go":     "package x\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) {}\n",
		"cassette.json": askCassette,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, env
}

// askCassette edits the end of x.go and creates notes.txt.
const askCassette = `{"version": 1, "turns": [
 {"tool_calls": [{"name": "edit_file", "arguments": {"path": "x.go", "old": "// end", "new": "// added\n// end"}}], "usage": {"input_tokens": 1100, "output_tokens": 20}},
 {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.txt", "content": "note\n"}}], "usage": {"input_tokens": 1200, "output_tokens": 20}},
 {"tool_calls": [{"name": "finish", "arguments": {"summary": "added a line"}}], "usage": {"input_tokens": 1500, "output_tokens": 60}}
]}`

// askApproved runs askCassette through ask, checks that the detected
// check ran, approves the change and returns the run id.
func askApproved(t *testing.T, bin, dir string, env []string) string {
	t.Helper()
	cmd := exec.Command(bin, "ask", "add a line", "--cassette", "cassette.json", "--approve", "never", "--json")
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.Output()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var sum struct {
		Run, Outcome string
		Verified     bool
		Checks       []struct{ Name string }
	}
	if jerr := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil || jerr != nil {
		t.Fatalf("ask: %v %v\n%s", err, jerr, out)
	}
	if sum.Outcome != "awaiting_approval" || !sum.Verified || len(sum.Checks) != 1 || sum.Checks[0].Name != "tests" {
		t.Fatalf("ask: want a change verified by the detected tests check, got %+v", sum)
	}
	if code, stderr := runIn(t, bin, dir, env, "approve", sum.Run); code != 0 {
		t.Fatalf("approve: exit %d\n%s", code, stderr)
	}
	return sum.Run
}

// testAskUndo: undo puts back x.go (keeping an edit the user made since,
// elsewhere in the file) and removes notes.txt; a second undo is refused.
func testAskUndo(t *testing.T, bin string) {
	dir, env := goProject(t)
	id := askApproved(t, bin, dir, env)
	read := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		return string(b)
	}
	if !strings.Contains(read("x.go"), "// added") || read("notes.txt") != "note\n" {
		t.Fatalf("the change was not applied: %q %q", read("x.go"), read("notes.txt"))
	}
	userEdit := strings.Replace(read("x.go"), "// one", "// one (user)", 1)
	os.WriteFile(filepath.Join(dir, "x.go"), []byte(userEdit), 0o644)
	code, stderr := runIn(t, bin, dir, env, "undo", strings.TrimPrefix(id, "r-")[:6])
	if code != 0 || !strings.Contains(stderr, "edits made since kept in x.go") {
		t.Fatalf("undo: exit %d\n%s", code, stderr)
	}
	if want := "package x\n\n// one (user)\n// two\n// three\n// four\n// end\n"; read("x.go") != want {
		t.Errorf("x.go after undo = %q, want %q", read("x.go"), want)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); !os.IsNotExist(err) {
		t.Errorf("notes.txt survived the undo: %v", err)
	}
	code, stderr = runIn(t, bin, dir, env, "undo", "--last")
	if code != 2 || !strings.Contains(stderr, "already undone") {
		t.Errorf("second undo: exit %d, want 2\n%s", code, stderr)
	}
	cmd := exec.Command(bin, "trace", id, "--json")
	cmd.Dir, cmd.Env = dir, env
	out, _ := cmd.Output()
	if !strings.Contains(string(out), `"type":"undo"`) {
		t.Errorf("the trace has no undo event:\n%s", out)
	}
}

// testUndoConflict: an edit of the line the change added refuses the
// undo, naming the file and line, and writes nothing (notes.txt stays).
func testUndoConflict(t *testing.T, bin string) {
	dir, env := goProject(t)
	id := askApproved(t, bin, dir, env)
	b, _ := os.ReadFile(filepath.Join(dir, "x.go"))
	edited := strings.Replace(string(b), "// added", "// added, then edited", 1)
	os.WriteFile(filepath.Join(dir, "x.go"), []byte(edited), 0o644)
	code, stderr := runIn(t, bin, dir, env, "undo", id)
	if code != 1 || !strings.Contains(stderr, "x.go: line 7") || !strings.Contains(stderr, "nothing was written") {
		t.Fatalf("undo over an overlapping edit: exit %d, want 1 naming x.go line 7\n%s", code, stderr)
	}
	if now, _ := os.ReadFile(filepath.Join(dir, "x.go")); string(now) != edited {
		t.Errorf("x.go changed: %q", now)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err != nil {
		t.Errorf("notes.txt removed by a refused undo: %v", err)
	}
}

// testUndoAuto: a change applied by --approve auto is undone exactly
// (every byte of x.go back, notes.txt gone); a change still pending is
// refused (exit 2) pointing at reject, and stays untouched.
func testUndoAuto(t *testing.T, bin string) {
	dir, env := goProject(t)
	orig, _ := os.ReadFile(filepath.Join(dir, "x.go"))
	if code, stderr := runIn(t, bin, dir, env, "ask", "add a line", "--cassette", "cassette.json", "--approve", "auto"); code != 0 {
		t.Fatalf("ask --approve auto: exit %d\n%s", code, stderr)
	}
	first := newRunID(t, bin, dir, env)
	if code, stderr := runIn(t, bin, dir, env, "undo", first); code != 0 || strings.Contains(stderr, "kept") {
		t.Fatalf("undo: exit %d\n%s", code, stderr)
	}
	if now, _ := os.ReadFile(filepath.Join(dir, "x.go")); string(now) != string(orig) {
		t.Errorf("x.go after undo = %q, want %q", now, orig)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); !os.IsNotExist(err) {
		t.Errorf("notes.txt survived the undo: %v", err)
	}

	if code, stderr := runIn(t, bin, dir, env, "ask", "add a line", "--cassette", "cassette.json", "--approve", "never"); code != 0 {
		t.Fatalf("ask --approve never: exit %d\n%s", code, stderr)
	}
	id := newRunID(t, bin, dir, env, first)
	if code, stderr := runIn(t, bin, dir, env, "undo", id); code != 2 || !strings.Contains(stderr, "ioh-lsp reject "+id) {
		t.Errorf("undo of a pending change: exit %d, want 2 pointing at reject\n%s", code, stderr)
	}
	if now, _ := os.ReadFile(filepath.Join(dir, "x.go")); string(now) != string(orig) {
		t.Errorf("a refused undo changed x.go: %q", now)
	}
}

// newRunID is the one run of the workspace at dir that is not in seen.
func newRunID(t *testing.T, bin, dir string, env []string, seen ...string) string {
	t.Helper()
	cmd := exec.Command(bin, "runs", "--json")
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.Output()
	var rows []struct {
		ID string `json:"id"`
	}
	if jerr := json.Unmarshal(out, &rows); err != nil || jerr != nil {
		t.Fatalf("runs --json: %v %v\n%s", err, jerr, out)
	}
	var fresh []string
	for _, r := range rows {
		if !slices.Contains(seen, r.ID) {
			fresh = append(fresh, r.ID)
		}
	}
	if len(fresh) != 1 {
		t.Fatalf("want one new run, got %v\n%s", fresh, out)
	}
	return fresh[0]
}
