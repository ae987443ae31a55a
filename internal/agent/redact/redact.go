// Package redact keeps secrets out of what is stored or printed: a
// Redactor replaces configured secret values (and their JSON-escaped
// spellings) with a placeholder, and the helpers here find the secrets of
// an environment and the credentials inside URLs (docs/trace-json.md says
// which). It is a leaf: the trace store, the harness and the command line
// share one Redactor.
package redact

import (
	"encoding/json"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Redactor replaces configured secret values with a placeholder. The zero
// value redacts nothing. Values shorter than 8 bytes are ignored: they are
// not keys and would mangle ordinary text. Each secret is also replaced in
// its JSON-escaped spelling, so a value with '&', '<', '"' or '\' is caught
// inside an encoded blob too.
//
// A Redactor from New can learn more secrets (Add) while it is in
// use; its copies share what it knows, so the trace store, the harness and
// the command line's output all redact a secret first seen in a contract.
// It is safe for concurrent use.
type Redactor struct {
	st *redactorState
}

// redactorState is what the copies of one Redactor share.
type redactorState struct {
	mu   sync.RWMutex
	vals []string
	r    *strings.Replacer
}

// Redacted is what a secret is replaced with.
const Redacted = "[REDACTED]"

// MinSecret is the shortest value treated as a secret.
const MinSecret = 8

// New returns a redactor for the given secret values.
func New(secrets []string) Redactor {
	st := &redactorState{}
	st.add(secrets)
	return Redactor{st: st}
}

// Add makes r (and every copy of it) redact more secret values too. On
// the zero Redactor it does nothing.
func (r Redactor) Add(secrets ...string) {
	if r.st == nil || len(secrets) == 0 {
		return
	}
	r.st.mu.Lock()
	defer r.st.mu.Unlock()
	r.st.add(secrets)
}

// add rebuilds the replacer over the known values and secrets; st.mu is
// held (or st is not shared yet).
func (st *redactorState) add(secrets []string) {
	seen := map[string]bool{}
	var vals []string
	for _, s := range append(append([]string(nil), st.vals...), secrets...) {
		if len(s) >= MinSecret && !seen[s] {
			seen[s] = true
			vals = append(vals, s)
		}
	}
	if len(vals) == len(st.vals) {
		return
	}
	st.vals = vals
	// Longer values first: a secret holding another is replaced whole.
	sorted := append([]string(nil), vals...)
	sort.SliceStable(sorted, func(i, j int) bool { return len(sorted[i]) > len(sorted[j]) })
	var pairs []string
	paired := map[string]bool{}
	for _, s := range sorted {
		for _, v := range []string{s, jsonEscaped(s)} {
			if !paired[v] {
				paired[v] = true
				pairs = append(pairs, v, Redacted)
			}
		}
	}
	st.r = strings.NewReplacer(pairs...)
}

// jsonEscaped is s as it appears inside a JSON string.
func jsonEscaped(s string) string {
	b, _ := json.Marshal(s) // a string always encodes
	return string(b[1 : len(b)-1])
}

// replacer is the current replacer (nil: nothing to redact).
func (r Redactor) replacer() *strings.Replacer {
	if r.st == nil {
		return nil
	}
	r.st.mu.RLock()
	defer r.st.mu.RUnlock()
	return r.st.r
}

// String redacts s.
func (r Redactor) String(s string) string {
	if rep := r.replacer(); rep != nil {
		return rep.Replace(s)
	}
	return s
}

// Bytes redacts b.
func (r Redactor) Bytes(b []byte) []byte {
	if rep := r.replacer(); rep != nil && b != nil {
		return []byte(rep.Replace(string(b)))
	}
	return b
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

// urlCredentials returns the credentials of each URL in v (a list such
// as GOPROXY's is split on commas, pipes and spaces): of a URL with
// userinfo, the password as written when it is long enough to be a key,
// else the whole "user:password"; and the value of each query parameter
// whose name marks a credential ("?api_key=…", "&token=…"), as written and
// percent-decoded.
func urlCredentials(v string) []string {
	if !strings.Contains(v, "://") || !strings.ContainsAny(v, "@?") {
		return nil
	}
	var out []string
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == '|' || r == ' ' || r == ';' }) {
		u, err := url.Parse(f)
		if err != nil || !strings.Contains(f, "://") {
			continue
		}
		if u.User != nil {
			if cred := userinfoCredential(f); len(cred) >= MinSecret {
				out = append(out, cred)
			}
		}
		out = append(out, queryCredentials(u.RawQuery)...)
	}
	return out
}

// userinfoCredential is the userinfo of URL f as it is written in it
// (percent-encoding kept), between "://" and the last "@" of the
// authority: the password when it is long enough to be a key, else the
// whole "user:password".
func userinfoCredential(f string) string {
	rest := f[strings.Index(f, "://")+3:]
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	at := strings.LastIndexByte(rest, '@')
	if at < 0 {
		return ""
	}
	info := rest[:at]
	if _, pw, ok := strings.Cut(info, ":"); ok && len(pw) >= MinSecret {
		return pw
	}
	return info
}

// credentialParams are words that mark a query parameter holding a
// credential, matched inside its lower-cased name.
var credentialParams = []string{"key", "token", "secret", "password", "passwd", "pwd", "auth", "sig", "credential", "session"}

// queryCredentials returns the values of the credential-like parameters
// of a raw query, as written and percent-decoded.
func queryCredentials(raw string) []string {
	var out []string
	for _, kv := range strings.FieldsFunc(raw, func(r rune) bool { return r == '&' }) {
		k, v, _ := strings.Cut(kv, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		name = strings.ToLower(name)
		marked := false
		for _, w := range credentialParams {
			marked = marked || strings.Contains(name, w)
		}
		if !marked {
			continue
		}
		if len(v) >= MinSecret {
			out = append(out, v)
		}
		if dec, err := url.QueryUnescape(v); err == nil && dec != v && len(dec) >= MinSecret {
			out = append(out, dec)
		}
	}
	return out
}

// URLSecrets returns the credentials in every URL of s (the userinfo
// password, credential-like query parameters), as the environment's are
// found (EnvSecrets).
func URLSecrets(s string) []string { return urlCredentials(s) }

// URLSecretsIn returns the credentials of every URL in a JSON document
// (a contract, a configuration): each string value is looked at.
func URLSecretsIn(doc []byte) []string {
	var out []string
	for _, s := range CredentialURLs(doc) {
		out = append(out, urlCredentials(s)...)
	}
	return out
}

// CredentialURLs returns the string values of a JSON document that hold
// a URL credential (URLSecrets), whole.
func CredentialURLs(doc []byte) []string {
	var v any
	if json.Unmarshal(doc, &v) != nil {
		return nil
	}
	var out []string
	walkStrings(v, func(s string) string {
		if len(urlCredentials(s)) > 0 {
			out = append(out, s)
		}
		return s
	})
	return out
}

// walkStrings calls f on every string value of a decoded JSON document,
// replacing each with what f returns.
func walkStrings(v any, f func(string) string) any {
	switch v := v.(type) {
	case string:
		return f(v)
	case []any:
		for i, e := range v {
			v[i] = walkStrings(e, f)
		}
	case map[string]any:
		for k, e := range v {
			v[k] = walkStrings(e, f)
		}
	}
	return v
}

// Unredact puts credentialed URLs back into a JSON document the store
// redacted: each string value equal to the redaction (by r) of one of
// urls becomes that URL. A stored contract's base_url thus gets its
// password back from the configuration it came from, when that still
// holds it. The document is returned unchanged when nothing matches.
func (r Redactor) Unredact(doc []byte, urls []string) []byte {
	if len(urls) == 0 || !strings.Contains(string(doc), Redacted) {
		return doc
	}
	var v any
	if json.Unmarshal(doc, &v) != nil {
		return doc
	}
	byRedacted := map[string]string{}
	for _, u := range urls {
		if red := r.String(u); red != u {
			byRedacted[red] = u
		}
	}
	changed := false
	v = walkStrings(v, func(s string) string {
		if u, ok := byRedacted[s]; ok {
			changed = true
			return u
		}
		return s
	})
	if !changed {
		return doc
	}
	out, err := json.Marshal(v)
	if err != nil {
		return doc
	}
	return out
}
