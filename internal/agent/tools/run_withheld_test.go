//go:build linux

package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/sandboxexec"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// TestRunWithholdsReadPolicyFiles goes through the real run tool and the
// real sandbox: while the read policy asks before .env is read (the
// built-in layer) or a user rule denies it, `cat .env` inside prints
// nothing of it and the result says it was withheld; a file the policy
// lets the model read is printed (control); and with .env allowed in
// this run (the approver's "allow for this run") the command reads it.
func TestRunWithholdsReadPolicyFiles(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, ".env"), []byte("API_KEY=SECRET-IN-ENV\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("PLAIN-NOTES\n"), 0o644)
	root, err := workspace.NewRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	cs := workspace.NewChangeSet(root)
	sb, err := sandboxexec.New(sandboxexec.Options{})
	if err != nil {
		t.Fatal(err)
	}
	check := func(layers ...policy.LayerRules) ReadCheck {
		p, err := policy.New(append([]policy.LayerRules{policy.Builtin(nil)}, layers...)...)
		if err != nil {
			t.Fatal(err)
		}
		return func(lexical, resolved string) policy.Verdict { return p.CheckPath(policy.ActRead, lexical, resolved) }
	}
	userDeny := policy.LayerRules{Layer: policy.LayerUser, Rules: []policy.Rule{{Act: policy.ActRead, Effect: policy.Deny, Pattern: "notes.txt"}}}
	allowRun := policy.LayerRules{Layer: policy.LayerRemembered, Rules: []policy.Rule{{Act: policy.ActRead, Effect: policy.Allow, Pattern: ".env"}}}
	args := json.RawMessage(`{"shell":"cat .env; cat notes.txt; echo END"}`)
	for _, c := range []struct {
		name            string
		reads           ReadCheck
		env, notes, say bool
	}{
		{"built-in asks about .env", nil, false, true, true},
		{"a user rule denies notes.txt", check(userDeny), false, false, true},
		{".env allowed for this run", check(allowRun), true, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := NewRun(cs, sb, c.reads).Call(context.Background(), args)
			if err != nil {
				t.Fatal(err)
			}
			out := res.Content
			if !strings.Contains(out, "END") {
				t.Fatalf("the command did not run:\n%s", out)
			}
			if got := strings.Contains(out, "SECRET-IN-ENV"); got != c.env {
				t.Errorf(".env printed: %v, want %v:\n%s", got, c.env, out)
			}
			if got := strings.Contains(out, "PLAIN-NOTES"); got != c.notes {
				t.Errorf("notes.txt printed: %v, want %v:\n%s", got, c.notes, out)
			}
			if got := strings.Contains(out, "withhold"); got != c.say {
				t.Errorf("the result says files were withheld: %v, want %v:\n%s", got, c.say, out)
			}
		})
	}
}
