// Package xdg resolves the XDG base directories (the XDG Base Directory
// Specification): a variable such as XDG_STATE_HOME counts only when it
// holds an absolute path; a relative or empty one is ignored and the
// default under the home directory applies. The user config
// (config.UserPath) and the trace's state directory (trace.StateDir) both
// resolve through Home, so neither can land inside a workspace because a
// variable was relative to wherever the process started.
package xdg

import (
	"errors"
	"path/filepath"
)

// ErrNoHome is returned when neither the variable nor a home directory
// ($HOME, else %USERPROFILE%) gives an absolute base.
var ErrNoHome = errors.New("no home directory: set HOME (or the XDG variable) to an absolute path")

// Home returns the base directory the XDG variable name selects: its
// value when that is an absolute path, else def (".config",
// ".local/state", ...) under the home directory.
func Home(getenv func(string) string, name, def string) (string, error) {
	if v := getenv(name); filepath.IsAbs(v) {
		return filepath.Clean(v), nil
	}
	home := getenv("HOME")
	if home == "" {
		home = getenv("USERPROFILE")
	}
	if !filepath.IsAbs(home) {
		return "", ErrNoHome
	}
	return filepath.Join(home, filepath.FromSlash(def)), nil
}
