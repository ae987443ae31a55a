package suite

import (
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
)

func loadContract(t *testing.T, path string) *contract.Contract {
	t.Helper()
	c, err := contract.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
