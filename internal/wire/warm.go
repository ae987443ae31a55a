package wire

import (
	"sync"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox"
)

// warmUsers counts the engines of this process that run their commands
// with warm stages (sandbox.KeepWarm). KeepWarm is process-wide: the first
// engine turns it on, and the last one closed turns it off, which kills
// the stages waiting and removes what was made ahead for a next run that
// will not come (the landlock tier's spare private directory, the spare
// cgroups), so a finished `ioh-lsp run` leaves none of them behind.
var warmUsers struct {
	sync.Mutex
	n int
}

// holdWarm turns warm stages on for one more engine and returns its
// release, which may be called more than once.
func holdWarm() (release func()) {
	warmUsers.Lock()
	warmUsers.n++
	if warmUsers.n == 1 {
		sandbox.KeepWarm(true)
	}
	warmUsers.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			warmUsers.Lock()
			defer warmUsers.Unlock()
			warmUsers.n--
			if warmUsers.n == 0 {
				sandbox.KeepWarm(false)
			}
		})
	}
}
