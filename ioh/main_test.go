package ioh_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/testenv"
	"github.com/ioh-lsp/ioh-lsp/ioh"
)

// TestMain is an embedder's main: the sandbox's stages re-execute this
// binary, and ioh.Init runs them.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m, ioh.Init)) }

// TestNewRefusesWhatItCannotBuild: a missing root, an unknown approval
// mode and a missing workspace are errors that name the fix; a contract
// that does not parse names its file and line.
func TestNewRefusesWhatItCannotBuild(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		cfg  ioh.Config
		says string
	}{
		{ioh.Config{}, "Config.Root is empty"},
		{ioh.Config{Root: t.TempDir(), Approve: "sometimes"}, `unknown approve mode "sometimes"`},
		{ioh.Config{Root: "/no/such/workspace"}, "/no/such/workspace"},
	} {
		if _, err := ioh.New(ctx, c.cfg); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("New(%+v) = %v, want an error saying %q", c.cfg, err, c.says)
		}
	}
	if _, err := ioh.ParseContract("task.ioh.yaml", []byte("version: 1\ngoal: [\n")); err == nil || !strings.Contains(err.Error(), "task.ioh.yaml:") {
		t.Errorf("ParseContract of broken YAML = %v, want an error naming the file and line", err)
	}
}
