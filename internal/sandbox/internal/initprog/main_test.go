package initprog

import (
	"os"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
