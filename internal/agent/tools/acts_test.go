package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// actsWorld is a workspace for the acts tests: ordinary files, a .git
// directory and a symlink into it.
func actsWorld(t *testing.T) *workspace.ChangeSet {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "one\n", "src/config": "[core]\n", ".git/config": "[core]\n", "docs/x.md": "x\n"})
	if err := os.Symlink("../.git", filepath.Join(dir, "src", "gitlink")); err != nil {
		t.Fatal(err)
	}
	root, err := workspace.NewRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	return workspace.NewChangeSet(root)
}

// written is every path the change set now changes (a rename counts its
// source and its target).
func written(cs *workspace.ChangeSet) []string {
	var out []string
	for _, ch := range cs.Changes() {
		out = append(out, ch.Path)
		if ch.From != "" {
			out = append(out, ch.From)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// checkActsAreWrites calls tool with args after its Acts: when the call
// succeeds, the set of paths the change set writes must equal the set of
// resolved paths the acts named, so a policy judging the acts judged
// exactly what was written.
func checkActsAreWrites(t *testing.T, cs *workspace.ChangeSet, tool Tool, args json.RawMessage) (acts []string, wrote []string, ok bool) {
	t.Helper()
	as, err := tool.Acts(args)
	if err != nil {
		r, cerr := tool.Call(context.Background(), args)
		if cerr != nil {
			t.Fatalf("call: %v", cerr)
		}
		if !r.IsError || len(cs.Changes()) != 0 {
			t.Fatalf("Acts refused %s (%v) but Call wrote %v: %q", args, err, written(cs), r.Content)
		}
		return nil, nil, false
	}
	for _, a := range as {
		acts = append(acts, a.Resolved)
	}
	slices.Sort(acts)
	acts = slices.Compact(acts)
	r, err := tool.Call(context.Background(), args)
	if err != nil {
		t.Fatalf("call: %v", err)
	}
	wrote = written(cs)
	if r.IsError {
		if len(wrote) != 0 {
			t.Fatalf("a failed call wrote %v", wrote)
		}
		return acts, nil, false
	}
	if diff := cmp.Diff(wrote, acts); diff != "" {
		t.Fatalf("%s: written paths (-got +acts):\n%s", args, diff)
	}
	return acts, wrote, true
}

func patchArgs(p string) json.RawMessage {
	b, _ := json.Marshal(ApplyPatchParams{Patch: p})
	return b
}

// The attack patches of issue 10 and their decodings: the acts name the
// decoded path (what the policy then judges), and applying writes that
// path and nothing else.
func TestPatchActsAreTheWrites(t *testing.T) {
	for _, tt := range []struct {
		name, patch string
		want        []string // resolved act paths; nil: refused as bad arguments
	}{
		{"quoted .git/config", "--- \"a/.git/config\"\n+++ \"b/.git/config\"\n@@ -1 +1,2 @@\n [core]\n+\tfsmonitor = x\n", []string{".git/config"}},
		{"octal escape", "--- /dev/null\n+++ \"b/\\056github/workflows/x.yml\"\n@@ -0,0 +1 @@\n+on: push\n", []string{".github/workflows/x.yml"}},
		{"dot-dot and escapes", "--- \"x/../docs/\\056\\056/.git/config\"\n+++ \"x/../docs/\\056\\056/.git/config\"\n@@ -1 +1 @@\n-[core]\n+[evil]\n", []string{".git/config"}},
		{"backquoted", "--- /dev/null\n+++ `b/.git/hooks/pre-commit`\n@@ -0,0 +1 @@\n+x\n", []string{".git/hooks/pre-commit"}},
		{"header-only diff --git", "diff --git a/.git/index.lock b/.git/index.lock\nnew file mode 100644\nindex 0000000..e69de29\n", []string{".git/index.lock"}},
		{"header-only next to a hunk", "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+1\ndiff --git a/docs/new b/docs/new\nnew file mode 100644\nindex 0000000..e69de29\n", []string{"a.txt", "docs/new"}},
		{"through a symlink", "--- a/src/gitlink/config\n+++ b/src/gitlink/config\n@@ -1 +1 @@\n-[core]\n+[evil]\n", []string{".git/config"}},
		{"quoted vscode", "--- /dev/null\n+++ \"b/\\056vscode/tasks.json\"\n@@ -0,0 +1 @@\n+{}\n", []string{".vscode/tasks.json"}},
		{"unicode escape", "--- /dev/null\n+++ \"b/\\u002eenv\"\n@@ -0,0 +1 @@\n+K=1\n", []string{".env"}},
		{"deletion", "--- a/docs/x.md\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n", []string{"docs/x.md"}},
		{"ordinary", "--- a/src/config\n+++ b/src/config\n@@ -1 +1 @@\n-[core]\n+[x]\n", []string{"src/config"}},
		{"escape refused", "--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-a\n+b\n", nil},
		{"escaped escape refused", "--- /dev/null\n+++ \"b/\\056\\056/x\"\n@@ -0,0 +1 @@\n+b\n", nil},
		{"newline in a name refused", "--- /dev/null\n+++ \"b/a\\nb\"\n@@ -0,0 +1 @@\n+b\n", nil},
		{"broken quote refused", "--- /dev/null\n+++ \"b/.git/config\n@@ -0,0 +1 @@\n+b\n", nil},
		{"rename refused", "--- a/a.txt\n+++ b/.git/config\n@@ -1 +1 @@\n-one\n+1\n", nil},
		// The *** Begin Patch envelope goes through the same decoding.
		{"V4A update", "*** Begin Patch\n*** Update File: src/config\n@@\n-[core]\n+[x]\n*** End Patch\n", []string{"src/config"}},
		{"V4A through a symlink", "*** Begin Patch\n*** Update File: src/gitlink/config\n@@\n-[core]\n+[evil]\n*** End Patch\n", []string{".git/config"}},
		{"V4A dot-dot", "*** Begin Patch\n*** Add File: docs/../.git/hooks/post-checkout\n+x\n*** End Patch\n", []string{".git/hooks/post-checkout"}},
		{"V4A add and delete", "*** Begin Patch\n*** Add File: docs/n.md\n+n\n*** Delete File: a.txt\n*** End Patch\n", []string{"a.txt", "docs/n.md"}},
		{"V4A escape refused", "*** Begin Patch\n*** Add File: ../x\n+x\n*** End Patch\n", nil},
		{"V4A move refused", "*** Begin Patch\n*** Update File: a.txt\n*** Move to: .git/config\n@@\n-one\n+1\n*** End Patch\n", nil},
		{"V4A control character refused", "*** Begin Patch\n*** Add File: a\x01b\n+x\n*** End Patch\n", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cs := actsWorld(t)
			acts, wrote, ok := checkActsAreWrites(t, cs, NewApplyPatch(cs, nil), patchArgs(tt.patch))
			if tt.want == nil {
				if ok || acts != nil {
					t.Fatalf("acts %v, wrote %v: want the patch refused", acts, wrote)
				}
				return
			}
			if !ok {
				t.Fatalf("the patch did not apply (acts %v)", acts)
			}
			if diff := cmp.Diff(acts, tt.want); diff != "" {
				t.Errorf("acts (-got +want):\n%s", diff)
			}
		})
	}
}

// The single-file tools and rename: their acts resolve through the same
// function their writes do (a symlink into .git shows up as .git).
func TestFileToolActsAreTheWrites(t *testing.T) {
	for _, tt := range []struct {
		tool, args string
		want       []string
	}{
		{"write_file", `{"path":"src/gitlink/hooks/pre-commit","content":"x"}`, []string{".git/hooks/pre-commit"}},
		{"write_file", `{"path":"./docs/../a.txt","content":"x"}`, []string{"a.txt"}},
		{"edit_file", `{"path":"src/gitlink/config","old":"core","new":"evil"}`, []string{".git/config"}},
		{"delete_file", `{"path":"src/gitlink/config"}`, []string{".git/config"}},
		{"rename_file", `{"from":"a.txt","to":"src/gitlink/hooks/post-checkout"}`, []string{".git/hooks/post-checkout", "a.txt"}},
		{"rename_file", `{"from":"a.txt","to":"docs/a.txt"}`, []string{"a.txt", "docs/a.txt"}},
	} {
		t.Run(tt.tool+" "+tt.args, func(t *testing.T) {
			cs := actsWorld(t)
			tool := Set(Env{Changes: cs}, nil)[tt.tool]
			acts, _, ok := checkActsAreWrites(t, cs, tool, json.RawMessage(tt.args))
			if !ok {
				t.Fatal("the call failed")
			}
			if diff := cmp.Diff(acts, tt.want); diff != "" {
				t.Errorf("acts (-got +want):\n%s", diff)
			}
		})
	}
}

// FuzzPatchActs: for any patch, the paths the policy is shown are the
// paths the change set ends up writing.
func FuzzPatchActs(f *testing.F) {
	for _, name := range []string{`"b/.git/config"`, `"b/\056github/w.yml"`, `"x/../docs/\056\056/.git/config"`, "b/src/gitlink/config", "`b/.env`", `"b/\x41"`} {
		f.Add("--- /dev/null\n+++ " + name + "\n@@ -0,0 +1 @@\n+x\n")
	}
	f.Add("diff --git a/.git/index.lock b/.git/index.lock\nnew file mode 100644\nindex 0000000..e69de29\n")
	f.Add("--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+two\ndiff --git \"a/\\056x\" \"b/\\056x\"\nnew file mode 100644\n")
	f.Fuzz(func(t *testing.T, patch string) {
		cs := actsWorld(t)
		checkActsAreWrites(t, cs, NewApplyPatch(cs, nil), patchArgs(patch))
	})
}

func TestPatchActsNameEveryFile(t *testing.T) {
	// Many files with generated quoted names: every one is an act.
	var b strings.Builder
	var want []string
	for i := range 20 {
		name := fmt.Sprintf("gen/\\%03o%d.txt", '.', i) // "\056" + i: a dot file
		fmt.Fprintf(&b, "--- /dev/null\n+++ \"b/%s\"\n@@ -0,0 +1 @@\n+%d\n", name, i)
		want = append(want, fmt.Sprintf("gen/.%d.txt", i))
	}
	slices.Sort(want)
	cs := actsWorld(t)
	acts, _, ok := checkActsAreWrites(t, cs, NewApplyPatch(cs, nil), patchArgs(b.String()))
	if !ok {
		t.Fatal("patch failed")
	}
	if diff := cmp.Diff(acts, want); diff != "" {
		t.Errorf("acts (-got +want):\n%s", diff)
	}
}

// A call is bound to the acts that were judged: when the workspace
// changes between the check and the call so that the same arguments now
// resolve elsewhere (a symlink appears), the call refuses and writes
// nothing; unchanged, the same judged call writes (control).
func TestCallIsBoundToJudgedActs(t *testing.T) {
	for _, swap := range []bool{true, false} {
		cs := actsWorld(t)
		for _, tc := range []struct{ tool, args string }{
			{"write_file", `{"path":"hooks/pre-commit","content":"x"}`},
			{"apply_patch", string(patchArgs("--- /dev/null\n+++ \"b/hooks/\\056x\"\n@@ -0,0 +1 @@\n+x\n"))},
		} {
			tool := Set(Env{Changes: cs}, nil)[tc.tool]
			acts, err := tool.Acts(json.RawMessage(tc.args))
			if err != nil {
				t.Fatal(err)
			}
			ctx := WithJudged(context.Background(), acts)
			hooks := filepath.Join(cs.Root().Dir(), "hooks")
			if swap {
				if err := os.Symlink(".git/hooks", hooks); err != nil {
					t.Fatal(err)
				}
			}
			r, err := tool.Call(ctx, json.RawMessage(tc.args))
			if err != nil {
				t.Fatal(err)
			}
			if swap {
				if !r.IsError || !strings.Contains(r.Content, "not what the policy judged") || cs.Len() != 0 {
					t.Errorf("%s after a symlink swap: %q, %d changes", tc.tool, r.Content, cs.Len())
				}
				os.Remove(hooks)
				continue
			}
			if r.IsError {
				t.Errorf("control %s: %q", tc.tool, r.Content)
			}
		}
		if !swap && cs.Len() != 2 {
			t.Errorf("control: %d changes, want 2", cs.Len())
		}
	}
}
