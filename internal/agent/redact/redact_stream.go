package redact

import "strings"

// Held returns how many bytes at the end of s may be the start of a
// secret (or of its JSON-escaped spelling) that the text after s would
// complete: a stream redacted piece by piece holds them back until the
// next piece shows whether they are one. 0 when no secret could start
// there.
func (r Redactor) Held(s string) int {
	if r.st == nil {
		return 0
	}
	r.st.mu.RLock()
	defer r.st.mu.RUnlock()
	held := 0
	for _, v := range r.st.vals {
		for _, spelling := range []string{v, jsonEscaped(v)} {
			held = max(held, prefixAtEnd(s, spelling))
		}
	}
	return held
}

// prefixAtEnd is the length of the longest proper prefix of v that s
// ends with.
func prefixAtEnd(s, v string) int {
	for n := min(len(s), len(v)-1); n > 0; n-- {
		if strings.HasSuffix(s, v[:n]) {
			return n
		}
	}
	return 0
}
