package policy

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// Bounds of the walk of /etc (etcUnreadable): a directory deeper than
// etcMaxDepth, or reached after etcMaxEntries entries, is left out of the
// view whole rather than looked into.
const (
	etcMaxDepth   = 8
	etcMaxEntries = 20000
)

// etcScanTTL bounds how long a walk of /etc is reused while no directory
// it read changed: a chmod of an existing file shows within it.
const etcScanTTL = 5 * time.Second

// etcScan is a cache's last walk of /etc: what it found, the modification time
// of every directory it read (a file created, removed or renamed there
// changes it) and when it ran.
type etcScan struct {
	sync.Mutex
	at     time.Time
	stamps map[string]int64
	out    []string
}

// etcUnreadable lists what under /etc "others" may not read, deny by
// default instead of a list of known secrets: every file without the
// other-read bit and every directory without other-read and other-search
// (not looked into), so a 0600 key, a WireGuard or NetworkManager
// connection or a letsencrypt archive stays out of the view even for a
// caller who is root. Symlinks are not judged here: their targets are
// where they lie. The walk (about 1,200 entries, 1-2 ms on a Debian
// /etc) is reused for etcScanTTL while no directory it read changed;
// a chmod of an existing file shows within etcScanTTL.
func (e *etcScan) unreadable() []string {
	e.Lock()
	defer e.Unlock()
	if e.out != nil && time.Since(e.at) <= etcScanTTL && stampsHold(e.stamps) {
		return e.out
	}
	stamps := map[string]int64{}
	at := time.Now()
	out := walkUnreadable("/etc", stamps)
	e.at, e.stamps, e.out = at, stamps, out
	return out
}

// walkUnreadable walks the directory top and returns, sorted, what others
// may not read below it, noting each directory's time in stamps (before
// reading it, so a change made meanwhile shows next time). Never nil.
func walkUnreadable(top string, stamps map[string]int64) []string {
	out := []string{}
	entries := 0
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		stamps[dir] = mtime(dir)
		ents, err := os.ReadDir(dir)
		if err != nil {
			if dir != top {
				out = append(out, dir) // not listable: leave it out
			}
			return
		}
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			if entries++; entries > etcMaxEntries {
				out = append(out, p)
				continue
			}
			if e.Type()&os.ModeSymlink != 0 {
				continue
			}
			fi, err := e.Info()
			if err != nil {
				continue // gone since the listing
			}
			perm := fi.Mode().Perm()
			switch {
			case fi.IsDir() && perm&0o005 != 0o005:
				out = append(out, p)
			case fi.IsDir() && depth >= etcMaxDepth:
				out = append(out, p)
			case fi.IsDir():
				walk(p, depth+1)
			case perm&0o004 == 0:
				out = append(out, p)
			}
		}
	}
	walk(top, 0)
	slices.Sort(out)
	return out
}
