package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"
)

// helpRequested is returned by parseFlags when -h or --help was given; the
// usage has already been printed.
type helpRequested struct{}

func (helpRequested) Error() string { return "help requested" }

// newFlagSet returns a FlagSet that reports errors instead of exiting and
// prints its usage to w only when help is asked for.
func newFlagSet(name string, w io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	// The flag package calls Usage on every parse error; parseFlags prints
	// the usage only when help was asked for (errors stay one line).
	fs.Usage = func() {}
	usages.Store(fs, func() {
		printHelp(w, fs)
	})
	return fs
}

// usages maps each FlagSet to its help printer (in-process tests may run
// commands concurrently).
var usages sync.Map // *flag.FlagSet → func()

// parseFlags parses args allowing flags before and after positional
// arguments (docs/cli.md#conventions). "--" ends the flags: everything after it is
// positional, even when it starts with '-'. It returns the positional
// arguments in order.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				if u, ok := usages.Load(fs); ok {
					u.(func())()
				}
				return nil, helpRequested{}
			}
			return nil, firstLine(didYouMeanFlag(fs, err))
		}
		rest := fs.Args()
		// flag.Parse stops at the first non-flag or after "--"; find which.
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	return pos, nil
}

// firstLine keeps error messages to one line.
func firstLine(err error) error {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return errors.New(s)
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// wantArgs checks the number of positional arguments.
func wantArgs(pos []string, min, max int) error {
	if len(pos) < min {
		return missingArg{got: len(pos)}
	}
	if max >= 0 && len(pos) > max {
		return fmt.Errorf("unexpected argument %q", pos[max])
	}
	return nil
}
