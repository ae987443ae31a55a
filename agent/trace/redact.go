package trace

import "strings"

// Redactor replaces configured secret values with a placeholder. The zero
// value redacts nothing. Values shorter than 8 bytes are ignored: they are
// not keys and would mangle ordinary text.
type Redactor struct {
	r *strings.Replacer
}

// Redacted is what a secret is replaced with.
const Redacted = "[REDACTED]"

// NewRedactor returns a redactor for the given secret values.
func NewRedactor(secrets []string) Redactor {
	var pairs []string
	for _, s := range secrets {
		if len(s) >= 8 {
			pairs = append(pairs, s, Redacted)
		}
	}
	if len(pairs) == 0 {
		return Redactor{}
	}
	return Redactor{r: strings.NewReplacer(pairs...)}
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
