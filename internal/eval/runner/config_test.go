package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/eval/result"
	"github.com/ioh-lsp/ioh-lsp/internal/eval/suite"
)

// TestVariantConfig: a variant's config is the user configuration its
// cells read (here it chooses the replay cassette), and a variant
// without one reads the user's own (which names none: the run fails).
func TestVariantConfig(t *testing.T) {
	tasks, _ := filepath.Abs("../../../examples/eval/tasks/mean")
	cassette, _ := filepath.Abs("../../../examples/eval/cassettes/fix/mean.json")
	p := filepath.Join(t.TempDir(), "suite.yaml")
	os.WriteFile(p, []byte(`tasks:
  - workspace: `+tasks+`
variants:
  - name: configured
    config:
      model: {provider: replay, cassette: `+cassette+`}
  - name: plain
`), 0o644)
	s, err := suite.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, err := Run(context.Background(), Options{Suite: s, Parallel: 2, Out: out}); err != nil {
		t.Fatal(err)
	}
	cells, _, err := result.Read(filepath.Join(out, result.FileName))
	if err != nil || len(cells) != 2 {
		t.Fatalf("%d cells, %v", len(cells), err)
	}
	for _, c := range cells {
		if c.Verified != (c.Variant == "configured") {
			t.Errorf("cell %s: verified %v, outcome %s (%s)", c.Key(), c.Verified, c.Outcome, c.Error)
		}
	}
}

// TestCellErrorsAreRedacted: a secret of the environment that reaches a
// cell's error (here in a cassette path) is not written to the results.
func TestCellErrorsAreRedacted(t *testing.T) {
	t.Setenv("EVAL_TEST_TOKEN", "s3cretvalue123")
	tasks, _ := filepath.Abs("../../../examples/eval/tasks/mean")
	p := filepath.Join(t.TempDir(), "suite.yaml")
	os.WriteFile(p, []byte("tasks:\n  - workspace: "+tasks+"\nvariants:\n  - {name: v, provider: replay, cassette: /nonexistent/s3cretvalue123.json}\n"), 0o644)
	s, err := suite.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, err := Run(context.Background(), Options{Suite: s, Out: out}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(out, result.FileName))
	if !strings.Contains(string(data), "nonexistent") || strings.Contains(string(data), "s3cretvalue123") {
		t.Fatalf("results: %s", data)
	}
}
