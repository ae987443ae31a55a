package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrWorkspaceTooWide is returned for a task whose workspace would be the
// file-system root or the user's home directory itself: the agent could
// then read and write everything there.
var ErrWorkspaceTooWide = errors.New("workspace too wide")

// CheckWorkspace refuses a workspace root that is the file-system root or
// the user's home directory ($HOME), compared both as written and with
// symlinks resolved: the agent could read and write everything there
// (`cd / && ioh-lsp run /elsewhere/t.ioh.yaml` ran in /). The fix is in
// the message.
func CheckWorkspace(root string, getenv func(string) string) error {
	if getenv == nil {
		getenv = os.Getenv
	}
	const fix = "put the task file in a project directory, or run \"git init\" in the directory that should be the workspace"
	forms := func(p string) []string {
		p = filepath.Clean(p)
		out := []string{p}
		if real, err := filepath.EvalSymlinks(p); err == nil && real != p {
			out = append(out, real)
		}
		return out
	}
	home := getenv("HOME")
	if home == "" {
		home = getenv("USERPROFILE")
	}
	for _, r := range forms(root) {
		if filepath.Dir(r) == r {
			return fmt.Errorf("%w: the workspace would be %s, the file-system root: %s", ErrWorkspaceTooWide, r, fix)
		}
		if home == "" || !filepath.IsAbs(home) {
			continue
		}
		for _, h := range forms(home) {
			if r == h {
				return fmt.Errorf("%w: the workspace would be %s, your home directory: %s", ErrWorkspaceTooWide, root, fix)
			}
		}
	}
	return nil
}
