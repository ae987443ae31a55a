package redact

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
	r := New([]string{secret})
	for _, in := range []string{secret, `{"v":"pa\u003css\u003e\u0026\"word\\1"}`} {
		if out := r.String(in); strings.Contains(out, "ss") {
			t.Errorf("redact %q = %q", in, out)
		}
	}
	if out := r.String("ordinary text"); out != "ordinary text" {
		t.Errorf("control changed: %q", out)
	}
}

// TestURLSecrets: a URL's userinfo password and credential-like query
// parameters (as written and decoded) are secrets; other parameters and
// URLs without credentials are not.
func TestURLSecrets(t *testing.T) {
	got := URLSecrets("http://user:pw-SUPERSECRET-98765@127.0.0.1:18999/v1?api_key=QSECRET-a%2Fb12345&page=12345678&Access_Token=tok-0123456789")
	want := []string{"pw-SUPERSECRET-98765", "QSECRET-a%2Fb12345", "QSECRET-a/b12345", "tok-0123456789"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("URLSecrets (-got +want):\n%s", diff)
	}
	for _, plain := range []string{"https://example.com/v1", "https://example.com/x?page=123456789", "not a url ?key=0123456789"} {
		if got := URLSecrets(plain); len(got) != 0 {
			t.Errorf("URLSecrets(%q) = %q, want none", plain, got)
		}
	}
	doc := []byte(`{"model":{"base_url":"http://u:pw-0123456789@h/v1"},"list":["https://h/?token=tok-9876543210"]}`)
	if got := URLSecretsIn(doc); len(got) != 2 {
		t.Errorf("URLSecretsIn = %q, want the password and the token", got)
	}
}

// TestRedactorAdd: a secret added later is redacted by every copy of the
// redactor; before it is added it is not (control).
func TestRedactorAdd(t *testing.T) {
	r := New([]string{"first-secret-1"})
	cp := r
	if out := cp.String("later-secret-2"); out != "later-secret-2" {
		t.Fatalf("control: redacted before it was added: %q", out)
	}
	r.Add("later-secret-2", "short")
	if out := cp.String("first-secret-1 later-secret-2 short"); out != Redacted+" "+Redacted+" short" {
		t.Errorf("after Add: %q", out)
	}
	var zero Redactor
	zero.Add("later-secret-2")
	if out := zero.String("later-secret-2"); out != "later-secret-2" {
		t.Errorf("the zero Redactor redacted: %q", out)
	}
}

// TestUnredact: a stored document's redacted URL gets its credential back
// from the configured URL it came from; a URL the configuration no longer
// holds stays redacted (control), and a document without one is returned
// as it is.
func TestUnredact(t *testing.T) {
	u := "http://user:pw-0123456789@h/v1?api_key=QSECRET-0123456789"
	r := New(URLSecrets(u))
	stored := []byte(r.String(`{"model":{"base_url":"` + u + `","name":"m"}}`))
	if strings.Contains(string(stored), "0123456789") {
		t.Fatalf("not redacted: %s", stored)
	}
	if got := string(r.Unredact(stored, []string{u})); !strings.Contains(got, `"base_url":"`+u+`"`) {
		t.Errorf("Unredact = %s, want the configured URL back", got)
	}
	other := "http://user:pw-9999999999@h/v1"
	if got := r.Unredact(stored, []string{other}); string(got) != string(stored) {
		t.Errorf("control: a URL that does not match changed the document: %s", got)
	}
	plain := []byte(`{"goal":"g"}`)
	if got := r.Unredact(plain, []string{u}); string(got) != string(plain) {
		t.Errorf("a document without redactions changed: %s", got)
	}
}
