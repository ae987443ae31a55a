package trace

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
)

// StateDir is the state directory (docs/trace.md): $IOH_STATE_DIR, else
// $XDG_STATE_HOME/ioh, else ~/.local/state/ioh.
func StateDir(getenv func(string) string) (string, error) {
	if d := getenv("IOH_STATE_DIR"); d != "" {
		return filepath.Abs(d)
	}
	if d := getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "ioh"), nil
	}
	home := getenv("HOME")
	if home == "" {
		home = getenv("USERPROFILE")
	}
	if home == "" {
		return "", errors.New("no state directory: set IOH_STATE_DIR, XDG_STATE_HOME or HOME")
	}
	return filepath.Join(home, ".local", "state", "ioh"), nil
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
