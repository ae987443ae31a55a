package suite

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
)

// Checkout makes the workspace of a git task under cache (once: a
// finished checkout is reused) and returns its directory. The repository
// must be available locally: nothing is fetched from a network (git runs
// with GIT_ALLOW_PROTOCOL=file).
func Checkout(ctx context.Context, t Task, cache string) (string, error) {
	if t.Git == "" {
		return t.Dir, nil
	}
	dir := filepath.Join(cache, t.ID)
	done := dir + ".done"
	if fileExists(done) {
		return dir, nil
	}
	os.RemoveAll(dir)
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	if err := git(ctx, "", "clone", "--quiet", "--no-checkout", t.Git, dir); err != nil {
		return "", fmt.Errorf("task %s: %w", t.ID, err)
	}
	if err := git(ctx, dir, "checkout", "--quiet", "--detach", t.Commit); err != nil {
		return "", fmt.Errorf("task %s: commit %s: %w", t.ID, t.Commit, err)
	}
	if !fileExists(filepath.Join(dir, t.Contract)) {
		return "", fmt.Errorf("task %s: the contract %s is not in %s at %s", t.ID, t.Contract, t.Git, t.Commit)
	}
	if _, err := contract.Load(filepath.Join(dir, t.Contract)); err != nil {
		return "", fmt.Errorf("task %s (%s at %s): %w", t.ID, t.Git, t.Commit, err)
	}
	return dir, os.WriteFile(done, nil, 0o644)
}

func git(ctx context.Context, dir string, args ...string) error {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_ALLOW_PROTOCOL=file", "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
