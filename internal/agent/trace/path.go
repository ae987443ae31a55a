package trace

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/config/xdg"
)

// StateDir is the state directory (docs/trace.md): $IOH_STATE_DIR, else
// $XDG_STATE_HOME/ioh, else ~/.local/state/ioh. A relative IOH_STATE_DIR
// is an error; a relative XDG_STATE_HOME is ignored (xdg.Home).
func StateDir(getenv func(string) string) (string, error) {
	if d := getenv("IOH_STATE_DIR"); d != "" {
		if !filepath.IsAbs(d) {
			return "", fmt.Errorf("%w: IOH_STATE_DIR=%q is a relative path: set it to an absolute directory, or unset it", ErrStateDir, d)
		}
		return filepath.Clean(d), nil
	}
	base, err := xdg.Home(getenv, "XDG_STATE_HOME", ".local/state")
	if err != nil {
		return "", fmt.Errorf("%w: set IOH_STATE_DIR, XDG_STATE_HOME or HOME to an absolute path", ErrStateDir)
	}
	return filepath.Join(base, "ioh"), nil
}

// DBPath is the database file of the workspace at root (absolute): one per
// workspace, named by the workspace's base name and a hash of its path.
func DBPath(stateDir, root string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(root)))
	name := fmt.Sprintf("%s-%s.db", sanitize(filepath.Base(root)), hex.EncodeToString(sum[:8]))
	return filepath.Join(stateDir, name)
}

func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		ok := c == '-' || c == '_' || c == '.' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !ok {
			b[i] = '_'
		}
	}
	if len(b) > 40 {
		b = b[:40]
	}
	if len(b) == 0 {
		return "root"
	}
	return string(b)
}
