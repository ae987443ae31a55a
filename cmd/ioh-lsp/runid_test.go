package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/trace"
)

// TestPickRun: a run id, a unique prefix (with or without "r-") and
// --last name a run; an ambiguous prefix lists the candidates; a run
// that is not there says which workspace was searched.
func TestPickRun(t *testing.T) {
	t0 := time.Now()
	rows := []*trace.RunRow{
		{ID: "r-1a2b3c", FirstStarted: t0},
		{ID: "r-1a9f00", FirstStarted: t0.Add(time.Minute)},
		{ID: "r-77aa00", FirstStarted: t0.Add(2 * time.Minute), Parent: "r-1a9f00"},
	}
	for arg, want := range map[string]string{"r-1a2b3c": "r-1a2b3c", "r-1a2": "r-1a2b3c", "1a9": "r-1a9f00", "77": "r-77aa00", "": "r-1a9f00"} {
		if got, err := pickRun(agent.StoredRuns(rows), arg, "/ws"); err != nil || got != want {
			t.Errorf("pickRun(%q) = %q, %v; want %s", arg, got, err, want)
		}
	}
	if _, err := pickRun(agent.StoredRuns(rows), "r-1a", "/ws"); !errors.Is(err, errAmbiguous) || !strings.Contains(err.Error(), "r-1a2b3c, r-1a9f00") {
		t.Errorf("ambiguous prefix: %v", err)
	}
	if _, err := pickRun(agent.StoredRuns(rows), "r-ffff", "/ws"); !errors.Is(err, trace.ErrNotFound) || !strings.Contains(err.Error(), "in the workspace /ws") {
		t.Errorf("not found: %v", err)
	}
	if _, err := pickRun(nil, "", "/ws"); !errors.Is(err, trace.ErrNotFound) {
		t.Errorf("--last without runs: %v", err)
	}
}

// TestRunsOutsideAWorkspace: `runs` and `trace` with the cwd at $HOME
// (no git root above) are refused (exit 2) and create no store; control:
// in a project below home they answer.
func TestRunsOutsideAWorkspace(t *testing.T) {
	home, state := t.TempDir(), t.TempDir()
	project := filepath.Join(home, "p")
	if err := os.MkdirAll(filepath.Join(project, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		return map[string]string{"HOME": home, "IOH_STATE_DIR": state, "XDG_CONFIG_HOME": home}[k]
	}
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	for _, dir := range []string{home, project} {
		if err := os.Chdir(dir); err != nil {
			t.Fatal(err)
		}
		var out, errb strings.Builder
		env := &cliEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: getenv}
		code := dispatch(t.Context(), env, []string{"runs"})
		tcode := dispatch(t.Context(), env, []string{"trace", "--last"})
		ents, _ := os.ReadDir(state)
		if dir == home {
			if code != exitUsage || tcode != exitUsage || !strings.Contains(errb.String(), "home directory") || len(ents) != 0 {
				t.Errorf("in $HOME: runs %d, trace %d, state %v: %s", code, tcode, ents, errb.String())
			}
			continue
		}
		if code != 0 || tcode != exitUsage || !strings.Contains(errb.String(), "no runs in the workspace "+project) {
			t.Errorf("control in a project: runs %d, trace --last %d: %s", code, tcode, errb.String())
		}
	}
}
