package tools

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// grep and find read many files under one call, so one read act of "."
// cannot stand for them: every file they return is judged as a read_file
// of it would be. A denied file is left out; a file whose read asks is
// left out too (asking once per search would interrupt the user for
// files the model may not need), and find names it so the model can
// read_file it and be asked then.

// builtinReads judges reads with the built-in layer alone, for a tool set
// built without the run's policy.
var builtinReads = sync.OnceValue(func() ReadCheck {
	p, err := policy.New(policy.Builtin(nil))
	if err != nil { // the built-in layer is a constant: cannot fail
		panic(fmt.Sprintf("built-in policy: %v", err))
	}
	return func(lexical, resolved string) policy.Verdict { return p.CheckPath(policy.ActRead, lexical, resolved) }
})

// readFilter sorts the paths a search comes across by the read policy.
// grep asks it about each file with a match before the match is kept
// (skip): a withheld file's matches are dropped without a word and do not
// use up the result cap, so what it holds never decides the answer.
// Naming it ("withheld: .env") only when it matched would let the model
// learn a .env a character at a time, one pattern per call. find, which
// looks at names only, names what it withheld (note).
type readFilter struct {
	cs      *workspace.ChangeSet
	check   ReadCheck
	mu      sync.Mutex // skip is called from the search's walkers
	effects map[string]policy.Effect
	asked   []string // withheld until the model asks for them one by one
	denied  int
}

func newReadFilter(cs *workspace.ChangeSet, check ReadCheck) *readFilter {
	if check == nil {
		check = builtinReads()
	}
	return &readFilter{cs: cs, check: check, effects: map[string]policy.Effect{}}
}

// allow reports whether the search may show path; the first verdict on
// each path is remembered for the note.
func (f *readFilter) allow(path string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	e, seen := f.effects[path]
	if !seen {
		e = policy.Deny // a path that cannot be resolved is not shown
		if resolved, err := f.cs.Key(path); err == nil {
			e = f.check(path, resolved).Effect
		}
		f.effects[path] = e
		switch e {
		case policy.Ask:
			f.asked = append(f.asked, path)
		case policy.Deny:
			f.denied++
		}
	}
	return e == policy.Allow
}

// skip is GrepOptions.Skip: a file the policy does not simply let the
// model read is not searched.
func (f *readFilter) skip(path string) bool { return !f.allow(path) }

// maxNamed caps the withheld paths a note lists.
const maxNamed = 20

// note tells the model what was left out ("" when nothing was).
func (f *readFilter) note() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var b strings.Builder
	if len(f.asked) > 0 {
		names := append([]string(nil), f.asked...)
		sort.Strings(names)
		more := ""
		if len(names) > maxNamed {
			more = fmt.Sprintf(" and %d more", len(names)-maxNamed)
			names = names[:maxNamed]
		}
		fmt.Fprintf(&b, "[withheld: %d file(s) need approval before they are read: %s%s; read_file one to be asked]\n",
			len(f.asked), strings.Join(names, ", "), more)
	}
	if f.denied > 0 {
		fmt.Fprintf(&b, "[left out: %d file(s) the policy does not let you read]\n", f.denied)
	}
	return b.String()
}
