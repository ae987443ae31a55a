package agent

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
)

// snapshot lists every file under dir with its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Type()&os.ModeSymlink != 0 {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The apply_patch attacks of issue 10, in pairs. Each patch names a
// protected path through quoting, C escapes, ".." elements, a header-only
// "diff --git", a backquoted name or a symlink. With the approver denying
// every ask (as under --approve auto), the contained run must refuse the
// call and leave the workspace byte for byte as it was; the control, the
// same patch with the path swapped for an ordinary one, must apply.
func TestApplyPatchEscapesAreRefused(t *testing.T) {
	files := map[string]string{
		".git/config": "[core]\n", "src/config": "[core]\n",
		".env": "KEY=1\n", "src/dotenv": "KEY=1\n",
		"src/a.go": "package a\n",
	}
	for _, tt := range []struct {
		name, tmpl, attack, control string
	}{
		{"quoted .git/config", "--- \"a/%s\"\n+++ \"b/%s\"\n@@ -1 +1,2 @@\n [core]\n+\tfsmonitor = \"touch pwned\"\n", ".git/config", "src/config"},
		{"escaped workflow", "--- /dev/null\n+++ \"b/%s\"\n@@ -0,0 +1 @@\n+on: push\n", `\056github/workflows/x.yml`, `src/\056github/workflows/x.yml`},
		{"dot-dot through escapes", "--- \"%s\"\n+++ \"%s\"\n@@ -1 +1,2 @@\n [core]\n+\thooksPath = /tmp\n", `x/../docs/\056\056/.git/config`, `x/../docs/\056\056/src/config`},
		{"header-only diff --git", "--- a/src/a.go\n+++ b/src/a.go\n@@ -1 +1,2 @@\n package a\n+// x\ndiff --git a/%s b/%s\nnew file mode 100644\nindex 0000000..e69de29\n", ".git/index.lock", "src/index.lock"},
		{"vscode tasks", "--- /dev/null\n+++ \"b/%s\"\n@@ -0,0 +1 @@\n+{\"tasks\":[]}\n", `\056vscode/tasks.json`, `src/\056vscodex/tasks.json`},
		{".env", "--- \"a/%s\"\n+++ \"b/%s\"\n@@ -1 +1 @@\n-KEY=1\n+KEY=2\n", `\056env`, `src/dotenv`},
		{"ioh config", "--- /dev/null\n+++ \"b/%s\"\n@@ -0,0 +1 @@\n+sandbox: {}\n", `\056ioh/config.yaml`, `src/\056iohx/config.yaml`},
		{"backquoted hook", "--- /dev/null\n+++ `b/%s`\n@@ -0,0 +1 @@\n+#!/bin/sh\n", ".git/hooks/pre-commit", "src/hooks/pre-commit"},
		{"symlink into .git", "--- a/%s\n+++ b/%s\n@@ -1 +1,2 @@\n [core]\n+\tfsmonitor = x\n", "src/gitlink/config", "src/config"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, side := range []struct {
				path      string
				contained bool
			}{{tt.attack, true}, {tt.control, false}} {
				patch := strings.ReplaceAll(tt.tmpl, "%s", side.path)
				f := newFixture(t, files, map[string][]turn{"": {
					say(10, "apply_patch", args{"patch": patch}),
					say(10, "finish", args{"summary": "done"}),
				}})
				if err := os.Symlink("../.git", filepath.Join(f.dir, "src", "gitlink")); err != nil {
					t.Fatal(err)
				}
				f.appr.act = Decision{Answer: Deny, Reason: "--approve auto denies ask-tier acts"}
				before := snapshot(t, f.dir)
				res := f.run(t, goal("patch"))
				result := f.prov.requests()[1].Messages[2].ToolResults[0]
				after := snapshot(t, f.dir)
				if side.contained {
					if !result.IsError || !strings.Contains(result.Content, "denied") {
						t.Errorf("attack %q: result %q, want a denial", side.path, result.Content)
					}
					if len(after) != len(before) {
						t.Errorf("attack %q: files on disk %d, were %d", side.path, len(after), len(before))
					}
					for p, c := range before {
						if after[p] != c {
							t.Errorf("attack %q wrote %s: %q", side.path, p, after[p])
						}
					}
					if res.Outcome != OutcomeApplied && res.Outcome != OutcomeUnverified && res.Outcome != OutcomeDenied {
						t.Errorf("attack %q: outcome %s (%v)", side.path, res.Outcome, res.Err)
					}
					evs, _ := f.store.Events(context.Background(), res.RunID)
					var denied []string
					for _, e := range evs {
						if p, ok := e.Payload.(*event.Policy); ok && p.Effect == "deny" {
							denied = append(denied, p.Target)
						}
					}
					if len(denied) == 0 {
						t.Errorf("attack %q: no deny verdict traced", side.path)
					}
					continue
				}
				if result.IsError {
					t.Fatalf("control %q: %q", side.path, result.Content)
				}
				if res.Outcome != OutcomeApplied {
					t.Fatalf("control %q: outcome %s (%v)", side.path, res.Outcome, res.Err)
				}
				var changed []string
				for p, c := range after {
					if before[p] != c {
						changed = append(changed, p)
					}
				}
				sort.Strings(changed)
				if len(changed) == 0 {
					t.Errorf("control %q: nothing was written", side.path)
				}
			}
		})
	}
}

// A patch that hides a file outside scope.write behind an ordinary file
// of the scope: every file it writes is judged, so the scope holds.
func TestApplyPatchKeepsScope(t *testing.T) {
	for _, tt := range []struct {
		extra     string
		contained bool
	}{{"docs/evil.md", true}, {"src/fine.go", false}} {
		patch := "--- a/src/a.go\n+++ b/src/a.go\n@@ -1 +1,2 @@\n package a\n+// x\ndiff --git a/" + tt.extra + " b/" + tt.extra + "\nnew file mode 100644\nindex 0000000..e69de29\n"
		f := newFixture(t, map[string]string{"src/a.go": "package a\n", "docs/x.md": "x\n"}, map[string][]turn{"": {
			say(10, "apply_patch", args{"patch": patch}),
			say(10, "finish", args{"summary": "done"}),
		}})
		c := goal("scoped")
		c.Scope.Write = []string{"src/**"}
		res := f.run(t, c)
		result := f.prov.requests()[1].Messages[2].ToolResults[0]
		_, err := os.Stat(filepath.Join(f.dir, filepath.FromSlash(tt.extra)))
		if tt.contained {
			if !result.IsError || err == nil || f.read(t, "src/a.go") != "package a\n" {
				t.Errorf("scope escape %s: result %q, file exists %v, a.go %q", tt.extra, result.Content, err == nil, f.read(t, "src/a.go"))
			}
			continue
		}
		if result.IsError || err != nil || res.Outcome != OutcomeApplied {
			t.Errorf("control %s: result %q, outcome %s, stat %v", tt.extra, result.Content, res.Outcome, err)
		}
	}
}

// A sub-agent asking for a wider scope than its parent's still writes only
// inside the parent's, through every tool and spelling; inside it, it
// writes (control).
func TestSubAgentCannotWidenScope(t *testing.T) {
	f := newFixture(t, map[string]string{"src/a.go": "package a\n", "docs/x.md": "x\n"}, map[string][]turn{
		"": {
			say(10, "spawn_agent", args{"goal": "wide", "scope": args{"write": []string{"**"}}}),
			say(10, "finish", args{"summary": "s"}),
		},
		"wide": {
			say(10,
				"write_file", args{"path": "docs/y.md", "content": "y"},
				"apply_patch", args{"patch": "--- /dev/null\n+++ \"b/docs/\\172.md\"\n@@ -0,0 +1 @@\n+z\n"},
				"rename_file", args{"from": "src/a.go", "to": "docs/a.go"},
				"write_file", args{"path": "src/ok.go", "content": "package a\n"}),
			say(10, "finish", args{"summary": "wide done"}),
		},
	})
	c := goal("scoped parent")
	c.Scope.Write = []string{"src/**"}
	res := f.run(t, c)
	if res.Outcome != OutcomeApplied {
		t.Fatalf("outcome %s (%v)", res.Outcome, res.Err)
	}
	for _, p := range []string{"docs/y.md", "docs/z.md", "docs/a.go"} {
		if _, err := os.Stat(filepath.Join(f.dir, p)); err == nil {
			t.Errorf("the child wrote %s outside the parent's scope", p)
		}
	}
	if got := f.read(t, "src/a.go"); got != "package a\n" {
		t.Errorf("src/a.go = %q: the rename out of scope went through", got)
	}
	if got := f.read(t, "src/ok.go"); got != "package a\n" {
		t.Errorf("control: src/ok.go = %q", got)
	}
}
