package sandboxexec

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contain"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// TestWithheldFilesEmptyInside: a withheld workspace file is empty for
// the command and the result names it; the other files, and a withheld
// file the change set writes (the model's own content), read as they
// are. Control: the same request without Withheld prints the secret.
func TestWithheldFilesEmptyInside(t *testing.T) {
	root := workspaceDir(t)
	if err := os.WriteFile(filepath.Join(root, ".env"), []byte("API_KEY=SECRET-ENV\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "sub", ".env.local"), []byte("OTHER=SECRET-LOCAL\n"), 0o600)
	a, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	req := &contain.Request{Shell: "cat .env; cat keep.txt; cat sub/.env.local; ls -a", Root: root,
		Changes:  []workspace.Change{{Op: workspace.OpCreate, Path: "sub/.env.local", Content: []byte("MODEL=OWN\n")}},
		Withheld: []string{".env", "sub/.env.local"}}
	res, err := a.Exec(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.Output)
	if strings.Contains(out, "SECRET-ENV") || !strings.Contains(out, "keep") || !strings.Contains(out, "MODEL=OWN") || !strings.Contains(out, ".env") {
		t.Errorf("%s tier: want .env empty but present, keep.txt and the change's own content read:\n%s", res.Backend, out)
	}
	named := false
	for _, m := range res.Mechanisms {
		named = named || (m.Name == "read-policy" && strings.Contains(m.Detail, ".env") && !strings.Contains(m.Detail, "sub/.env.local"))
	}
	if !named {
		t.Errorf("no read-policy mechanism names .env alone: %+v", res.Mechanisms)
	}
	req.Withheld = nil
	if res, err := a.Exec(context.Background(), req); err != nil || !strings.Contains(string(res.Output), "SECRET-ENV") {
		t.Errorf("control without Withheld: %v\n%s", err, res.Output)
	}
}
