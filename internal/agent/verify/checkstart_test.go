package verify

import (
	"context"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contain"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
)

// OnCheckStart names each check run before the sandbox runs it, red
// phase first, and OnCheck follows each.
func TestOnCheckStartComesBeforeEachRun(t *testing.T) {
	var seen []string
	sb := &scriptedSandbox{answer: func(req *contain.Request) (*contain.Result, error) {
		seen = append(seen, "exec")
		return fixedBy(req)
	}}
	v := contract.Verify{RedGreen: true, Checks: []contract.Check{
		{Name: "unit", Run: []string{"make", "test"}},
		{Name: "lint", Shell: "go vet ./..."},
	}}
	_, err := RunWith(context.Background(), Options{Sandbox: sb, Root: "/ws", Changes: fix, Verify: v,
		OnCheckStart: func(name, phase string) { seen = append(seen, "start "+phase+":"+name) },
		OnCheck:      func(c CheckResult) { seen = append(seen, "done "+c.Phase+":"+c.Name) },
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "start red:unit exec done red:unit start red:lint exec done red:lint " +
		"start green:unit exec done green:unit start green:lint exec done green:lint"
	if got := strings.Join(seen, " "); got != want {
		t.Errorf("calls:\n%s\nwant:\n%s", got, want)
	}
}
