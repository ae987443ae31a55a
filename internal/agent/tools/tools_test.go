package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

func newSet(t *testing.T) (map[string]Tool, *workspace.ChangeSet) {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\nthree\n"), 0o644)
	root, err := workspace.NewRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	cs := workspace.NewChangeSet(root)
	return Set(Env{Changes: cs}, nil), cs
}

func TestToolCalls(t *testing.T) {
	tests := []struct {
		tool, args string
		want       string
		isErr      bool
	}{
		{"read_file", `{"path":"a.txt","offset":2,"limit":1}`, "     2\ttwo\n[lines 2–2 of 3; continue with offset=3]\n", false},
		{"read_file", `{"path":"a.txt","offset":3}`, "     3\tthree\n[lines 3–3 of 3; end of file]\n", false},
		{"read_file", `{"path":"a.txt","offset":4}`, "read a.txt: offset 4 is past the end: the file has 3 lines (the last is offset=3)", true},
		{"read_file", `{"path":"a.txt","offset":9}`, "read a.txt: offset 9 is past the end: the file has 3 lines", true},
		{"read_file", `{"path":"nope.txt"}`, "read nope.txt", true},
		{"read_file", `{"path":"a.txt","bogus":1}`, "bad arguments", true},
		{"edit_file", `{"path":"a.txt","old":"two","new":"2"}`, "edited a.txt: replaced 1 occurrence(s) at line 2:\n     1\tone\n     2\t2\n     3\tthree", false},
		{"edit_file", `{"path":"a.txt","old":"2","new":"2"}`, "edit a.txt: old and new are the same text: nothing would change", true},
		{"edit_file", `{"path":"a.txt","old":"","new":"2"}`, "bad arguments: old must not be empty", true},
		{"edit_file", `{"path":"a.txt","old":"absent","new":"2"}`, "edit a.txt: old text not found", true},
		{"write_file", `{"path":"b/c.txt","content":"x"}`, "wrote 1 bytes to b/c.txt", false},
		{"list_dir", `{}`, "a.txt 12\nb/\n", false}, // after the edit
		{"grep", `{"pattern":"thr"}`, "a.txt:3:three\n", false},
		{"find", `{"glob":"**/*.txt"}`, "a.txt\nb/c.txt\n", false},
		{"rename_file", `{"from":"b/c.txt","to":"b/d.txt"}`, "renamed b/c.txt to b/d.txt", false},
		{"rename_file", `{"from":"b/c.txt","to":"b/e.txt"}`, "rename b/c.txt", true},
		{"delete_file", `{"path":"b/d.txt"}`, "deleted b/d.txt", false},
		{"run", `{"argv":["true"],"shell":"true"}`, "bad arguments: give exactly one of argv and shell", true},
		{"run", `{"argv":["true"]}`, "run: no sandbox is configured", true},
		{"finish", `{"summary":"s"}`, "finished: s", false},
	}
	set, _ := newSet(t)
	for _, tt := range tests {
		r, err := set[tt.tool].Call(context.Background(), json.RawMessage(tt.args))
		if err != nil {
			t.Fatalf("%s %s: %v", tt.tool, tt.args, err)
		}
		if strings.Count(r.Content, tt.tool[:strings.IndexByte(tt.tool+"_", '_')]+" ") > 1 && tt.isErr {
			t.Errorf("%s %s = %q: the operation is named twice", tt.tool, tt.args, r.Content)
		}
		if r.IsError != tt.isErr || !strings.HasPrefix(r.Content, tt.want) {
			t.Errorf("%s %s = %q (error %v), want prefix %q (error %v)", tt.tool, tt.args, r.Content, r.IsError, tt.want, tt.isErr)
		}
	}
}

func TestActs(t *testing.T) {
	set, _ := newSet(t)
	patch := "--- a/x.go\n+++ b/x.go\n@@ -1 +1 @@\n-a\n+b\n--- /dev/null\n+++ b/new.go\n@@ -0,0 +1 @@\n+c\n"
	pj, _ := json.Marshal(map[string]string{"patch": patch})
	tests := []struct {
		tool, args string
		want       []Act
	}{
		{"read_file", `{"path":"a.txt"}`, []Act{{Act: policy.ActRead, Target: "a.txt", Resolved: "a.txt"}}},
		{"write_file", `{"path":"./d/../x","content":""}`, []Act{{Act: policy.ActWrite, Target: "x", Resolved: "x"}}},
		// A patch, an edit and a rename also read what they reveal (the
		// patched files, the edited file, the renamed source).
		{"apply_patch", string(pj), []Act{{Act: policy.ActWrite, Target: "x.go", Resolved: "x.go"}, {Act: policy.ActWrite, Target: "new.go", Resolved: "new.go"},
			{Act: policy.ActRead, Target: "x.go", Resolved: "x.go"}, {Act: policy.ActRead, Target: "new.go", Resolved: "new.go"}}},
		{"edit_file", `{"path":"a.txt","old":"a","new":"b"}`, []Act{{Act: policy.ActWrite, Target: "a.txt", Resolved: "a.txt"}, {Act: policy.ActRead, Target: "a.txt", Resolved: "a.txt"}}},
		{"rename_file", `{"from":"a.txt","to":"b/c.txt"}`, []Act{{Act: policy.ActWrite, Target: "a.txt", Resolved: "a.txt"}, {Act: policy.ActWrite, Target: "b/c.txt", Resolved: "b/c.txt"},
			{Act: policy.ActRead, Target: "a.txt", Resolved: "a.txt"}}},
		{"grep", `{"pattern":"x"}`, []Act{{Act: policy.ActRead, Target: ".", Resolved: "."}}},
		{"run", `{"argv":["go","test","./..."]}`, []Act{{Act: policy.ActExec, Target: "go test ./...", Argv: []string{"go", "test", "./..."}}}},
		{"run", `{"shell":"make"}`, []Act{{Act: policy.ActExec, Target: "sh -c make", Shell: "make"}}},
		{"finish", `{"summary":"x"}`, nil},
	}
	for _, tt := range tests {
		got, err := set[tt.tool].Acts(json.RawMessage(tt.args))
		if err != nil {
			t.Fatalf("%s: %v", tt.tool, err)
		}
		if diff := cmp.Diff(got, tt.want); diff != "" {
			t.Errorf("%s acts (-got +want):\n%s", tt.tool, diff)
		}
	}
	if _, err := set["apply_patch"].Acts(json.RawMessage(`{"patch":"nothing"}`)); err == nil {
		t.Error("a patch naming no files: want an error")
	}
	if _, err := set["write_file"].Acts(json.RawMessage(`{"path":"../x","content":""}`)); err == nil {
		t.Error("a path leaving the workspace: want an error")
	}
	if _, err := set["run"].Acts(json.RawMessage(`{"argv":["x"],"timeout":"soon"}`)); err == nil {
		t.Error("a bad timeout: want an error")
	}
}

func TestSpecsAreValidJSONSchema(t *testing.T) {
	set, _ := newSet(t)
	for _, s := range Specs(set) {
		var m map[string]any
		if err := json.Unmarshal(s.Schema, &m); err != nil || m["type"] != "object" {
			t.Errorf("%s: schema %s: %v", s.Name, s.Schema, err)
		}
		if s.Description == "" {
			t.Errorf("%s: no description", s.Name)
		}
	}
}
