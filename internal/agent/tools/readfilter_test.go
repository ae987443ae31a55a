package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

func searchWorld(t *testing.T) *workspace.ChangeSet {
	t.Helper()
	dir := t.TempDir()
	for p, c := range map[string]string{
		".env":            "API_TOKEN=s3cr3t-value\n",
		"config/app.txt":  "token=s3cr3t-value\n",
		"keys/server.pem": "s3cr3t-value\n",
	} {
		abs := filepath.Join(dir, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(abs), 0o755)
		if err := os.WriteFile(abs, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// An innocent name for the .env file.
	if err := os.Symlink(".env", filepath.Join(dir, "settings.txt")); err != nil {
		t.Fatal(err)
	}
	root, err := workspace.NewRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	return workspace.NewChangeSet(root)
}

// grep and find judge every file they return as a read of it: with the
// built-in layer (reading **/.env* and keys asks), .env's line is left
// out without a word (TestSearchIsNoOracleForWithheldFiles says why),
// while the same value in an ordinary file is returned (control); find
// leaves .env out of its list and names it in a note.
func TestSearchFiltersReads(t *testing.T) {
	cs := searchWorld(t)
	set := Set(Env{Changes: cs}, nil)
	r, err := set["grep"].Call(context.Background(), json.RawMessage(`{"pattern":"s3cr3t"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Content, "config/app.txt:1:token=s3cr3t-value") {
		t.Errorf("control: the ordinary file's line is missing:\n%s", r.Content)
	}
	for _, leak := range []string{"API_TOKEN", ".env:1", "server.pem:1", "settings.txt:1"} {
		if strings.Contains(r.Content, leak) {
			t.Errorf("grep returned %q from a file that needs approval:\n%s", leak, r.Content)
		}
	}
	if strings.Contains(r.Content, "withheld") || strings.Contains(r.Content, ".env") {
		t.Errorf("grep tells which withheld files match:\n%s", r.Content)
	}

	r, err = set["find"].Call(context.Background(), json.RawMessage(`{"glob":"**/*"}`))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(r.Content, "\n")
	for _, l := range lines {
		if l == ".env" || l == "keys/server.pem" {
			t.Errorf("find listed %s, which needs approval to read:\n%s", l, r.Content)
		}
	}
	if !strings.Contains(r.Content, "\nconfig/app.txt\n") {
		t.Errorf("control: find lost config/app.txt:\n%s", r.Content)
	}
	if !strings.Contains(r.Content, "withheld: 2 file(s)") || !strings.Contains(r.Content, ".env") || !strings.Contains(r.Content, "read_file") {
		t.Errorf("find's note does not name the withheld files:\n%s", r.Content)
	}
}

// A deny rule drops a file silently; an allow remembered for the run
// lets it through.
func TestSearchFollowsTheRunPolicy(t *testing.T) {
	cs := searchWorld(t)
	p, err := policy.New(policy.Builtin(nil), policy.LayerRules{Layer: policy.LayerUser, Rules: []policy.Rule{
		{Act: policy.ActRead, Effect: policy.Deny, Pattern: "config/**"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	reads := func(l, r string) policy.Verdict { return p.CheckPath(policy.ActRead, l, r) }
	got, err := NewGrep(cs, reads).Call(context.Background(), json.RawMessage(`{"pattern":"s3cr3t"}`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got.Content, "config/app.txt") || strings.Contains(got.Content, "left out") {
		t.Errorf("denied file not left out:\n%s", got.Content)
	}
	allowed, err := p.With(policy.LayerRules{Layer: policy.LayerRemembered, Rules: []policy.Rule{{Act: policy.ActRead, Effect: policy.Allow, Pattern: ".env"}}})
	if err != nil {
		t.Fatal(err)
	}
	reads = func(l, r string) policy.Verdict { return allowed.CheckPath(policy.ActRead, l, r) }
	got, err = NewGrep(cs, reads).Call(context.Background(), json.RawMessage(`{"pattern":"s3cr3t","glob":".env"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got.Content, ".env:1:API_TOKEN=s3cr3t-value") {
		t.Errorf("a read allowed for the run is still withheld:\n%s", got.Content)
	}
}

// read_file through a symlink to .env is judged as a read of .env: the
// built-in layer asks, while a read of the ordinary file is allowed
// (control).
func TestReadThroughSymlinkIsJudgedAtItsTarget(t *testing.T) {
	cs := searchWorld(t)
	p, err := policy.New(policy.Builtin(nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path string
		want policy.Effect
	}{{"settings.txt", policy.Ask}, {"config/app.txt", policy.Allow}} {
		acts, err := NewReadFile(cs, nil).Acts(json.RawMessage(`{"path":"` + tt.path + `"}`))
		if err != nil {
			t.Fatal(err)
		}
		if v := p.CheckPath(acts[0].Act, acts[0].Target, acts[0].Resolved); v.Effect != tt.want {
			t.Errorf("read %s (resolved %s) = %s, want %s", tt.path, acts[0].Resolved, v.Effect, tt.want)
		}
	}
}

// What grep answers must not depend on what a withheld file holds: the
// model could otherwise learn .env a character at a time from whether
// .env is named among the withheld files (or from its matches using up
// max). Two searches that differ only in what .env would match answer
// the same; the same two searches over an ordinary file differ
// (control: content does decide a search the policy lets through).
func TestSearchIsNoOracleForWithheldFiles(t *testing.T) {
	cs := searchWorld(t)
	grep := func(pattern string, max int) string {
		t.Helper()
		args, _ := json.Marshal(GrepParams{Pattern: pattern, Max: max})
		r, err := NewGrep(cs, nil).Call(context.Background(), args)
		if err != nil {
			t.Fatal(err)
		}
		return r.Content
	}
	if hit, miss := grep("API_TOKEN=s3", 0), grep("API_TOKEN=zz", 0); hit != miss {
		t.Errorf("a withheld file's content decides the answer:\nmatching .env:\n%s\nnot matching:\n%s", hit, miss)
	}
	if hit, miss := grep("value", 1), grep("token=s3", 1); hit != miss {
		t.Errorf("a withheld file's matches count against max:\n%s\nvs\n%s", hit, miss)
	}
	if hit, miss := grep("token=s3", 0), grep("token=zz", 0); hit == miss {
		t.Errorf("control: an ordinary file's content does not decide the answer:\n%s", hit)
	}
}
