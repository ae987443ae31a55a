package contract

import (
	"fmt"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
)

// checkGlobs checks every glob the contract holds, each entry on its own,
// with the check the policy's rule compiler uses (policy.CheckPathGlob):
// context, scope.write, verify.protect and the patterns of policy.rules.
// The entry is checked as the run will read it (surrounding space and a
// leading "./" dropped). The first problem in document order is returned.
func checkGlobs(t *tree, c *Contract) *Error {
	var errs []*Error
	at := func(ptr, msg string) {
		p := t.values[ptr]
		errs = append(errs, &Error{Line: p.line, Col: p.col, Field: fieldOf(ptr), Msg: msg})
	}
	list := func(base string, globs []string) {
		for i, g := range globs {
			if err := policy.CheckPathGlob(strings.TrimSpace(g)); err != nil {
				at(fmt.Sprintf("%s/%d", base, i), err.Error())
			}
		}
	}
	list("/context", c.Context)
	list("/scope/write", c.Scope.Write)
	list("/verify/protect", c.Verify.Protect)
	for i, r := range c.Policy.Rules {
		if err := policy.CheckRule(r); err != nil {
			at(fmt.Sprintf("/policy/rules/%d/pattern", i), err.Error())
		}
	}
	if len(errs) == 0 {
		return nil
	}
	first := errs[0]
	for _, e := range errs[1:] {
		if e.Line < first.Line || (e.Line == first.Line && e.Col < first.Col) {
			first = e
		}
	}
	return first
}
