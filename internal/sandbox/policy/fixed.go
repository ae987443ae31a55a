package policy

import (
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/view"

	"os"
	"slices"
	"strings"
	"sync"
)

// fixedMasks is a cache's last expansion of etcSecrets and this program's own
// state and config directories (fixedMaskTargets), with the times of the
// directories it was read from, as homeMasks keeps them.
type fixedMasks struct {
	sync.Mutex
	key    string
	stamps map[string]int64
	out    []string
}

// fixedMaskTargets expands etcSecrets and ownStateDirs, and adds what
// others may not read in /etc (etcUnreadable). It expands them as maskTargets
// expands its extra paths (each that exists, and its resolved target),
// reused while the environment they come from and every directory they
// were read from (each path's and each target's parent, /home and
// /etc/passwd for the list of homes) are unchanged: about 25 stats
// instead of 100 lookups and a read of /etc/passwd per spawn.
func (c *Cache) fixedMaskTargets() []string {
	m := &c.fixed
	key := strings.Join([]string{os.Getenv("HOME"), os.Getenv("IOH_STATE_DIR"), os.Getenv("XDG_STATE_HOME"), os.Getenv("XDG_CONFIG_HOME")}, "\x00")
	m.Lock()
	defer m.Unlock()
	etc := c.etc.unreadable() // etc.go: reused while /etc is unchanged
	if m.out != nil && m.key == key && stampsHold(m.stamps) {
		return view.Merge(slices.Clip(m.out), etc)
	}
	stamps := map[string]int64{"/home": mtime("/home"), "/etc/passwd": mtime("/etc/passwd")}
	paths := append(append([]string{}, etcSecrets...), ownStateDirs()...)
	out, reusable := expandStamped(paths, stamps) // masks.go
	m.key, m.stamps, m.out = key, stamps, nil
	if reusable {
		m.out = out
	}
	return view.Merge(slices.Clip(out), etc)
}
