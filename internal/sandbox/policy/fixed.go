package policy

import (
	"os"
	"slices"
	"strings"
	"sync"
)

// fixedMasks is the last expansion of etcSecrets and this program's own
// state and config directories (fixedMaskTargets), with the times of the
// directories it was read from, as homeMasks keeps them.
var fixedMasks struct {
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
func fixedMaskTargets() []string {
	key := strings.Join([]string{os.Getenv("HOME"), os.Getenv("IOH_STATE_DIR"), os.Getenv("XDG_STATE_HOME"), os.Getenv("XDG_CONFIG_HOME")}, "\x00")
	fixedMasks.Lock()
	defer fixedMasks.Unlock()
	etc := etcUnreadable() // etc.go: reused while /etc is unchanged
	if fixedMasks.out != nil && fixedMasks.key == key && stampsHold(fixedMasks.stamps) {
		return mergeMasks(slices.Clip(fixedMasks.out), etc)
	}
	stamps := map[string]int64{"/home": mtime("/home"), "/etc/passwd": mtime("/etc/passwd")}
	paths := append(append([]string{}, etcSecrets...), ownStateDirs()...)
	out, reusable := expandStamped(paths, stamps) // masks.go
	fixedMasks.key, fixedMasks.stamps, fixedMasks.out = key, stamps, nil
	if reusable {
		fixedMasks.out = out
	}
	return mergeMasks(slices.Clip(out), etc)
}

// mergeMasks appends the masks of b that a does not hold.
func mergeMasks(a, b []string) []string {
	seen := make(map[string]bool, len(a))
	for _, p := range a {
		seen[p] = true
	}
	for _, p := range b {
		if !seen[p] {
			seen[p] = true
			a = append(a, p)
		}
	}
	return a
}
