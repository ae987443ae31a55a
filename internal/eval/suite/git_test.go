package suite

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestGitTask: a git task is checked out at its commit (not the
// branch's later state) once, and a commit the repository lacks is an
// error naming the task and the commit.
func TestGitTask(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	repo := filepath.Join(t.TempDir(), "lib")
	os.MkdirAll(filepath.Join(repo, ".ioh", "tasks"), 0o755)
	gitRun(t, repo, "init", "-q")
	os.WriteFile(filepath.Join(repo, ".ioh", "tasks", "fix.yaml"), []byte("goal: fix it\nverify: [{run: [echo]}]\n"), 0o644)
	os.WriteFile(filepath.Join(repo, "a.txt"), []byte("first\n"), 0o644)
	gitRun(t, repo, "add", ".")
	gitRun(t, repo, "commit", "-q", "-m", "one")
	commit := gitRun(t, repo, "rev-parse", "HEAD")
	os.WriteFile(filepath.Join(repo, "a.txt"), []byte("second\n"), 0o644)
	gitRun(t, repo, "commit", "-q", "-am", "two")

	dir := t.TempDir()
	p := filepath.Join(dir, "suite.yaml")
	os.WriteFile(p, []byte("tasks:\n  - git: {url: "+repo+", commit: "+commit+"}\n    contract: .ioh/tasks/fix.yaml\n"), 0o644)
	s, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	task := s.Tasks[0]
	if task.ID != "lib-"+commit[:8] || !task.Inside {
		t.Fatalf("task %+v", task)
	}
	cache := filepath.Join(dir, "repos")
	ws, err := Checkout(context.Background(), task, cache)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "first\n" {
		t.Fatalf("checked out %q, want the commit's first", b)
	}
	if again, err := Checkout(context.Background(), task, cache); err != nil || again != ws {
		t.Fatalf("second checkout %s, %v", again, err)
	}
	bad := task
	os.WriteFile(filepath.Join(repo, ".ioh", "tasks", "fix.yaml"), []byte("goal: fix it\nbudget: {dollars: 1}\n"), 0o644)
	gitRun(t, repo, "commit", "-q", "-am", "bad contract")
	bad.Commit, bad.ID = gitRun(t, repo, "rev-parse", "HEAD"), "bad"
	if _, err := Checkout(context.Background(), bad, cache); err == nil || !strings.Contains(err.Error(), "fix.yaml:2:") || !strings.Contains(err.Error(), "budget.dollars") {
		t.Fatalf("bad contract: %v", err)
	}
	task.Commit, task.ID = "0123456789abcdef0123456789abcdef01234567", "missing"
	if _, err := Checkout(context.Background(), task, cache); err == nil || !strings.Contains(err.Error(), "task missing: commit 0123456789") {
		t.Fatalf("missing commit: %v", err)
	}
}
