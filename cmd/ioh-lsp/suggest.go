package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/suggest"
)

// didYouMeanFlag adds "did you mean --X?" to the flag package's "flag
// provided but not defined: -x" when fs has a flag near x.
func didYouMeanFlag(fs *flag.FlagSet, err error) error {
	const undefined = "flag provided but not defined: "
	msg := err.Error()
	if !strings.HasPrefix(msg, undefined) {
		return err
	}
	name := strings.TrimLeft(strings.TrimPrefix(msg, undefined), "-")
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if s := suggest.Nearest(name, names); s != "" {
		return fmt.Errorf("unknown flag --%s; did you mean --%s?", name, s)
	}
	return fmt.Errorf("unknown flag --%s (ioh-lsp %s --help lists the flags)", name, commandOf(fs.Name()))
}

// commandOf is a flag set's command without its positionals ("run FILE"
// → "run", "sandbox run" stays).
func commandOf(name string) string {
	var words []string
	for _, w := range strings.Fields(name) {
		if strings.ToUpper(w) == w {
			break
		}
		words = append(words, w)
	}
	return strings.Join(words, " ")
}
