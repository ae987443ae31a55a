package view

import (
	"os"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/testenv"
)

// TestMain gives the tests a HOME, XDG directories and state directory of
// their own, so they never read the user's real configuration.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
