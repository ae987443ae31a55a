package trace

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEnvSecrets(t *testing.T) {
	env := []string{
		"ANTHROPIC_API_KEY=sk-ant-0123456789",
		"GH_TOKEN=ghp_abcdefghij",
		"SHORT_TOKEN=abc",
		"GOPROXY=https://user:tok-0123456789@proxy.example/mod,https://a:b@short.example,direct",
		"PIP_INDEX_URL=https://reader:s3cr3t%2Fpass@pypi.example/simple",
		"HOME=/home/u",
		"PATH=/usr/bin",
		"NOTE=see https://example.com/x",
	}
	got := EnvSecrets(env)
	want := []Secret{
		{Name: "ANTHROPIC_API_KEY", Value: "sk-ant-0123456789"},
		{Name: "GH_TOKEN", Value: "ghp_abcdefghij"},
		{Name: "GOPROXY#1", Value: "tok-0123456789"},
		{Name: "PIP_INDEX_URL#1", Value: "s3cr3t%2Fpass"},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("EnvSecrets (-got +want):\n%s", diff)
	}
	if v, ok := LookupSecret(env, "GOPROXY#1"); !ok || v != "tok-0123456789" {
		t.Errorf("LookupSecret(GOPROXY#1) = %q, %v", v, ok)
	}
	if _, ok := LookupSecret(env, "HOME"); ok {
		t.Error("HOME is not a secret")
	}
}

// A secret is caught in its JSON-escaped spelling too; text without it
// is left alone (control).
func TestRedactorCatchesJSONEscapes(t *testing.T) {
	secret := `pa<ss>&"word\1`
	r := NewRedactor([]string{secret})
	for _, in := range []string{secret, `{"v":"pa\u003css\u003e\u0026\"word\\1"}`} {
		if out := r.String(in); strings.Contains(out, "ss") {
			t.Errorf("redact %q = %q", in, out)
		}
	}
	if out := r.String("ordinary text"); out != "ordinary text" {
		t.Errorf("control changed: %q", out)
	}
}
