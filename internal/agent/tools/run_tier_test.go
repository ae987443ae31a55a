package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contain"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// tierSandbox answers every command with a fixed result.
type tierSandbox struct{ res contain.Result }

func (s tierSandbox) Exec(context.Context, *contain.Request) (*contain.Result, error) {
	r := s.res
	return &r, nil
}

// TestRunResultNamesTier: the run tool's result says which sandbox tier
// ran the command and, for a downgrade, why, so the model and the trace
// never take a weaker containment for the strongest.
func TestRunResultNamesTier(t *testing.T) {
	dir := t.TempDir()
	root, err := workspace.NewRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	cs := workspace.NewChangeSet(root)
	args := json.RawMessage(`{"argv":["true"]}`)
	for _, c := range []struct {
		res  contain.Result
		want string
	}{
		{contain.Result{Backend: "linux", Output: []byte("ok\n")}, "exit code 0\nsandbox: linux tier\nok\n"},
		{contain.Result{Backend: "landlock", Downgrade: "linux: user namespaces unavailable", Output: []byte("ok\n")},
			"exit code 0\nsandbox: landlock tier (downgraded; linux: user namespaces unavailable)\nok\n"},
	} {
		got, err := NewRun(cs, tierSandbox{c.res}, nil).Call(context.Background(), args)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(got.Content, c.want) || got.IsError {
			t.Errorf("run result %q (error %v), want it to start %q", got.Content, got.IsError, c.want)
		}
	}
}
