package verify

import (
	"regexp"
	"sync"
)

// lazyRE is a regular expression compiled on first use: the parsers'
// patterns are many, and compiling them in the package's initialisation
// made every start of the CLI pay for them (`ioh-lsp version` included),
// though few runs parse any output. An invalid pattern panics at first
// use, which the parser tests reach.
type lazyRE struct {
	pat  string
	once sync.Once
	re   *regexp.Regexp
}

func newLazyRE(pat string) *lazyRE { return &lazyRE{pat: pat} }

func (l *lazyRE) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.pat) })
	return l.re
}

func (l *lazyRE) MatchString(s string) bool { return l.get().MatchString(s) }

func (l *lazyRE) FindStringSubmatch(s string) []string { return l.get().FindStringSubmatch(s) }

func (l *lazyRE) ReplaceAllString(src, repl string) string {
	return l.get().ReplaceAllString(src, repl)
}
