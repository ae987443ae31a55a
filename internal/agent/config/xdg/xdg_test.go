package xdg

import (
	"errors"
	"path/filepath"
	"testing"
)

func TestHome(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
		err  error
	}{
		{map[string]string{"XDG_STATE_HOME": "/x", "HOME": "/h"}, "/x", nil},
		{map[string]string{"XDG_STATE_HOME": "/x/../y/", "HOME": "/h"}, "/y", nil},
		// Relative values are ignored, as the spec says.
		{map[string]string{"XDG_STATE_HOME": "relst", "HOME": "/h"}, "/h/.local/state", nil},
		{map[string]string{"XDG_STATE_HOME": "./s", "HOME": "/h"}, "/h/.local/state", nil},
		{map[string]string{"HOME": "/h"}, "/h/.local/state", nil},
		{map[string]string{"USERPROFILE": "/u"}, "/u/.local/state", nil},
		{map[string]string{"XDG_STATE_HOME": "relst"}, "", ErrNoHome},
		{map[string]string{"HOME": "h"}, "", ErrNoHome},
	} {
		got, err := Home(func(k string) string { return tc.env[k] }, "XDG_STATE_HOME", ".local/state")
		if !errors.Is(err, tc.err) || got != filepath.FromSlash(tc.want) {
			t.Errorf("%v: %q, %v; want %q, %v", tc.env, got, err, tc.want, tc.err)
		}
	}
}
