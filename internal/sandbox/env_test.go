package sandbox

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBuildEnv(t *testing.T) {
	parent := []string{
		"PATH=/usr/bin", "LANG=C.UTF-8", "LC_ALL=C", "HOME=/root", "GOCACHE=/c",
		"OPENAI_API_KEY=sk-1", "ANTHROPIC_API_KEY=sk-2", "GITHUB_TOKEN=t", "AWS_SECRET_ACCESS_KEY=a",
		"AWS_PROFILE=p", "DB_PASSWORD=x", "EDITOR=vim", "SSH_AUTH_SOCK=/run/s",
	}
	got := BuildEnv(parent, "/tmp/home", []string{"GOFLAGS=-mod=mod", "LANG=fr_FR", "MY_TOKEN=zz"})
	want := []string{"PATH=/usr/bin", "LANG=fr_FR", "LC_ALL=C", "GOCACHE=/c", "HOME=/tmp/home", "GOFLAGS=-mod=mod"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("BuildEnv (-got +want):\n%s", diff)
	}
	if got := BuildEnv(nil, "/h", nil); got[0] != "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin" {
		t.Errorf("no PATH in parent: got %q, want a default PATH", got)
	}
}

func TestSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"OPENAI_API_KEY": true, "ANTHROPIC_API_KEY": true, "GITHUB_TOKEN": true, "CLIENT_SECRET": true,
		"AWS_ACCESS_KEY_ID": true, "PGPASSWORD": true, "NETRC": true, "GOAUTH": true,
		"PATH": false, "GOPATH": false, "GOCACHE": false, "LANG": false, "TERM": false,
	} {
		if got := secretName(name); got != want {
			t.Errorf("secretName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestSpecValidate(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		spec *Spec
		want error
	}{
		{"nil", nil, ErrNoCommand},
		{"empty argv", &Spec{}, ErrNoCommand},
		{"secret env", &Spec{Argv: []string{"x"}, Env: []string{"X_API_KEY=1"}}, ErrSecretEnv},
		{"malformed env", &Spec{Argv: []string{"x"}, Env: []string{"NOVALUE"}}, ErrBadSpec},
		{"negative limit", &Spec{Argv: []string{"x"}, Limits: Limits{Memory: -1}}, ErrBadSpec},
		{"relative mask", &Spec{Argv: []string{"x"}, View: View{Masked: []string{"rel"}}}, ErrBadSpec},
		{"unknown backend", &Spec{Argv: []string{"x"}, Backend: "jail"}, ErrUnknownBackend},
		{"writable root /", &Spec{Argv: []string{"x"}, Writable: []string{"/"}}, ErrBadSpec},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.spec.validate(); !errors.Is(err, tc.want) {
				t.Errorf("validate: %v, want %v", err, tc.want)
			}
		})
	}
	s, err := (&Spec{Argv: []string{"x"}, Writable: []string{dir}}).validate()
	if err != nil {
		t.Fatal(err)
	}
	if s.Dir != s.Writable[0] || s.Limits.Wall != DefaultLimits.Wall || s.Limits.Output != DefaultLimits.Output {
		t.Errorf("defaults: dir %q wall %v output %d", s.Dir, s.Limits.Wall, s.Limits.Output)
	}
	if _, err := (&Spec{Argv: []string{"x"}, Writable: []string{dir + "/missing"}}).validate(); err == nil {
		t.Error("a missing writable root was accepted")
	}
}

// TestStageEnvKeepsOnlyGORACE: a stage process gets the race runtime's
// options (so a race-built test binary acting as the stage does not sleep
// at exit) and nothing else of the parent's environment.
func TestStageEnvKeepsOnlyGORACE(t *testing.T) {
	t.Setenv("GORACE", "atexit_sleep_ms=0")
	t.Setenv("OPENAI_API_KEY", "sk-1")
	if diff := cmp.Diff(stageEnv("A=b"), []string{"GORACE=atexit_sleep_ms=0", "A=b"}); diff != "" {
		t.Errorf("stageEnv (-got +want):\n%s", diff)
	}
	if got := BuildEnv([]string{"GORACE=halt_on_error=1", "OPENAI_API_KEY=sk-1"}, "/h", nil); !slices.Contains(got, "GORACE=halt_on_error=1") || slices.Contains(got, "OPENAI_API_KEY=sk-1") {
		t.Errorf("BuildEnv = %q; want GORACE kept and the key dropped", got)
	}
}
