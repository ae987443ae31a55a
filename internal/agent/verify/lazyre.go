package verify

import (
	"regexp"
	"sync"
)

// lazyRE is a regular expression compiled on first use: the parsers'
// patterns are many, and compiling them in the package's initialisation
// made every start of the CLI pay for them (`ioh-lsp version` included),
// though few runs parse any output. An invalid pattern panics at first
// use, which the parser tests reach. Declare one as &lazyRE{pat: `...`}:
// the compiler lays that out as static data, where a constructor call
// would allocate at every start.
type lazyRE struct {
	pat  string
	once sync.Once
	re   *regexp.Regexp
}

func (l *lazyRE) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.pat) })
	return l.re
}

func (l *lazyRE) MatchString(s string) bool { return l.get().MatchString(s) }

func (l *lazyRE) FindStringSubmatch(s string) []string { return l.get().FindStringSubmatch(s) }

func (l *lazyRE) ReplaceAllString(src, repl string) string {
	return l.get().ReplaceAllString(src, repl)
}

// lazyValue is a package-level table built on first use, for the same
// reason: a map literal in a var initializer is built at every start.
// Declare one as &lazyValue[T]{build: func() T { return ... }}, which is
// static data.
type lazyValue[T any] struct {
	once  sync.Once
	build func() T
	v     T
}

func (l *lazyValue[T]) get() T {
	l.once.Do(func() { l.v = l.build() })
	return l.v
}
