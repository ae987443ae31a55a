package config

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestSandboxRequireAndReadable: sandbox.require is read from the user
// config only (a workspace or the editor cannot lower it), its value is
// checked, and sandbox.readable widens the read view only from a trusted
// layer.
func TestSandboxRequireAndReadable(t *testing.T) {
	env := func(string) string { return "" }
	dir := t.TempDir()
	user := filepath.Join(dir, "user", "config.yaml")
	ws := filepath.Join(dir, "ws")
	write(t, user, "sandbox:\n  require: linux\n  readable: [/opt/tools]\n")
	write(t, filepath.Join(ws, ".ioh", "config.yaml"), "sandbox:\n  require: floor\n  readable: [/srv/data]\n")
	c, err := Load(LoadOptions{UserPath: user, WorkspaceRoot: ws, Editor: json.RawMessage(`{"sandbox": {"require": "floor"}}`), Getenv: env})
	if err != nil {
		t.Fatal(err)
	}
	if c.Sandbox.Require != "linux" {
		t.Errorf("require = %q, want linux from the user config (workspace and editor may not lower it)", c.Sandbox.Require)
	}
	if len(c.Sandbox.Readable) != 1 || c.Sandbox.Readable[0] != "/opt/tools" {
		t.Errorf("readable = %v, want only the user config's /opt/tools (the workspace is untrusted)", c.Sandbox.Readable)
	}
	var warnedRequire, warnedReadable int
	for _, w := range c.Warnings {
		if strings.Contains(w, "sandbox.require ignored: it is only read from the user config") {
			warnedRequire++
		}
		if strings.Contains(w, "sandbox.readable ignored") {
			warnedReadable++
		}
	}
	if warnedRequire != 2 || warnedReadable != 1 {
		t.Errorf("warnings %q: want require ignored twice (editor, workspace) and readable once", c.Warnings)
	}

	// Unset, it is the default; a bad value is an error with its place.
	c, err = Load(LoadOptions{UserPath: filepath.Join(dir, "none.yaml"), Getenv: env})
	if err != nil || c.Sandbox.Require != "" || RequireDefault != "landlock" {
		t.Errorf("unset require: %q, %v (default %q)", c.Sandbox.Require, err, RequireDefault)
	}
	bad := filepath.Join(dir, "bad.yaml")
	write(t, bad, "sandbox: {require: chroot}\n")
	_, err = Load(LoadOptions{UserPath: bad, Getenv: env})
	if err == nil || err.Error() != bad+`:1:20: sandbox.require: want linux, landlock or floor, got "chroot"` {
		t.Errorf("bad require: %v", err)
	}
}
