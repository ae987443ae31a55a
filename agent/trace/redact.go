package trace

import (
	"encoding/json"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// Redactor replaces configured secret values with a placeholder. The zero
// value redacts nothing. Values shorter than 8 bytes are ignored: they are
// not keys and would mangle ordinary text. Each secret is also replaced in
// its JSON-escaped spelling, so a value with '&', '<', '"' or '\' is caught
// inside an encoded blob too.
type Redactor struct {
	r *strings.Replacer
}

// Redacted is what a secret is replaced with.
const Redacted = "[REDACTED]"

// MinSecret is the shortest value treated as a secret.
const MinSecret = 8

// NewRedactor returns a redactor for the given secret values.
func NewRedactor(secrets []string) Redactor {
	// Longer values first: a secret holding another is replaced whole.
	vals := append([]string(nil), secrets...)
	sort.SliceStable(vals, func(i, j int) bool { return len(vals[i]) > len(vals[j]) })
	var pairs []string
	seen := map[string]bool{}
	add := func(s string) {
		if len(s) >= MinSecret && !seen[s] {
			seen[s] = true
			pairs = append(pairs, s, Redacted)
		}
	}
	for _, s := range vals {
		add(s)
		add(jsonEscaped(s))
	}
	if len(pairs) == 0 {
		return Redactor{}
	}
	return Redactor{r: strings.NewReplacer(pairs...)}
}

// jsonEscaped is s as it appears inside a JSON string.
func jsonEscaped(s string) string {
	b, _ := json.Marshal(s) // a string always encodes
	return string(b[1 : len(b)-1])
}

// String redacts s.
func (r Redactor) String(s string) string {
	if r.r == nil {
		return s
	}
	return r.r.Replace(s)
}

// Bytes redacts b.
func (r Redactor) Bytes(b []byte) []byte {
	if r.r == nil || b == nil {
		return b
	}
	return []byte(r.r.Replace(string(b)))
}

// Secret is a value that must never be stored, named by where it comes
// from so it can be found again: an environment variable ("OPENAI_API_KEY")
// or the credential of the i-th URL in one ("GOPROXY#1").
type Secret struct {
	Name  string
	Value string
}

// secretSuffixes mark variables that hold keys.
var secretSuffixes = []string{"_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD"}

// IsSecretName reports a variable whose value is a secret by its name.
func IsSecretName(name string) bool {
	up := strings.ToUpper(name)
	for _, suf := range secretSuffixes {
		if strings.HasSuffix(up, suf) {
			return true
		}
	}
	return false
}

// EnvSecrets returns the secrets in an environment given as KEY=VALUE
// entries: the value of every variable whose name marks a key (IsSecretName)
// and the credential in every URL of any value ("https://user:token@host"
// in GOPROXY, say). Values shorter than MinSecret are left out. Sorted by
// name.
func EnvSecrets(environ []string) []Secret {
	var out []Secret
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || v == "" {
			continue
		}
		if IsSecretName(k) && len(v) >= MinSecret {
			out = append(out, Secret{Name: k, Value: v})
		}
		for i, cred := range urlCredentials(v) {
			out = append(out, Secret{Name: k + "#" + strconv.Itoa(i+1), Value: cred})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// LookupSecret finds the secret called name in an environment, as
// EnvSecrets names it.
func LookupSecret(environ []string, name string) (string, bool) {
	for _, s := range EnvSecrets(environ) {
		if s.Name == name {
			return s.Value, true
		}
	}
	return "", false
}

// urlCredentials returns the credential of each URL with userinfo in v (a
// list such as GOPROXY's is split on commas, pipes and spaces): the
// password as written when it is long enough to be a key, else the whole
// "user:password".
func urlCredentials(v string) []string {
	if !strings.Contains(v, "@") || !strings.Contains(v, "://") {
		return nil
	}
	var out []string
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == '|' || r == ' ' || r == ';' }) {
		u, err := url.Parse(f)
		if err != nil || u.User == nil {
			continue
		}
		// The userinfo as it is written in the value (percent-encoding
		// kept), between "://" and the last "@" of the authority.
		rest := f[strings.Index(f, "://")+3:]
		if i := strings.IndexAny(rest, "/?#"); i >= 0 {
			rest = rest[:i]
		}
		at := strings.LastIndexByte(rest, '@')
		if at < 0 {
			continue
		}
		info := rest[:at]
		cred := info
		if _, pw, ok := strings.Cut(info, ":"); ok && len(pw) >= MinSecret {
			cred = pw
		}
		if len(cred) >= MinSecret {
			out = append(out, cred)
		}
	}
	return out
}
