package sandbox

import (
	"encoding/binary"
	"errors"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Before a prebuilt ruleset serves its run, each hinted path must still
// name the file its rule holds (tier_landlock_hint_linux.go). One stat per
// path costs about 1.5 us here, 0.25 ms for a view of 160 paths, most of
// them the entries of a directory carved around its secrets (/etc, a home
// given as the workspace). For such a directory one listing says the
// same: its entries' names and inode numbers.
//
// A path D/name is taken as unchanged from D's listing when
//   - at the prebuild it was no symlink, no missing path, and its file was
//     on D's device, on a filesystem whose listings give the inode number
//     a lookup of the name finds (ext2/3/4, XFS, Btrfs: not overlayfs,
//     network or FUSE filesystems, where they may differ);
//   - D, opened now, is on that device, and its listing now gives name
//     the inode number recorded; the rule holds a reference on that inode
//     (Landlock's object pins it), so the number cannot have been reused
//     by another file: it is the very inode, and it is no symlink (a
//     file's type never changes);
//   - no mount or unmount happened in this mount namespace since before
//     the prebuild looked at the paths, up to after the listing: nothing
//     was mounted over D/name, which a listing cannot see (the kernel
//     flags every change of the mount table to a reader of
//     /proc/thread-self/mountinfo that polls it).
//
// Every other path, and every path when anything above does not hold, is
// checked with its own stat.

// minListed is how many view paths a directory must hold for one listing
// to replace their stats.
const minListed = 8

// listedDir is a directory whose view entries are checked by one listing.
type listedDir struct {
	dir   string
	dev   uint64         // the device of the directory and of each entry's file
	names map[string]int // entry name → index in the view
}

// listingFS are the filesystems whose directory listings give the inode
// number a lookup of the name finds.
func listingFS(magic int64) bool {
	switch uint32(magic) {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC:
		return true
	}
	return false
}

// planCheck finds the directories whose view entries one listing can
// check, and opens the watch on the mount table first. Before the run;
// nothing is planned when anything fails.
func (pr *prebuiltRuleset) planCheck() {
	pr.mounts = -1
	fd, err := unix.Open("/proc/thread-self/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	byDir := map[string][]int{}
	for i, p := range pr.hint.view {
		id := pr.ids[i]
		var st unix.Stat_t
		if id.missing || unix.Lstat(p, &st) != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK || st.Dev != id.dev || st.Ino != id.ino {
			continue
		}
		if d := filepath.Dir(p); d != p {
			byDir[d] = append(byDir[d], i)
		}
	}
	for d, is := range byDir {
		if len(is) < minListed {
			continue
		}
		dev, ok := listableDir(d)
		if !ok {
			continue
		}
		g := &listedDir{dir: d, dev: dev, names: make(map[string]int, len(is))}
		for _, i := range is {
			if pr.ids[i].dev == dev {
				g.names[filepath.Base(pr.hint.view[i])] = i
			}
		}
		pr.listed = append(pr.listed, g)
	}
	pr.mounts = fd
	if len(pr.listed) > 0 {
		// The listings' buffer, its pages touched now rather than on the
		// run's time.
		pr.buf = make([]byte, 16<<10)
		for i := 0; i < len(pr.buf); i += 1024 {
			pr.buf[i] = 1
		}
	}
}

// listableDir opens d and returns its device if it is on a filesystem
// whose listings can stand for lookups.
func listableDir(d string) (uint64, bool) {
	fd, err := unix.Open(d, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	var fs unix.Statfs_t
	if unix.Fstat(fd, &st) != nil || unix.Fstatfs(fd, &fs) != nil || !listingFS(int64(fs.Type)) {
		return 0, false
	}
	return st.Dev, true
}

// unchanged reports whether every hinted path still names the file its
// rule holds: the entries of the planned directories by their listings
// (unless the mount table changed since the prebuild looked at them, up
// to after the listings), every other path, and any a listing did not
// confirm, by a stat each. All on the calling thread: a helper goroutine
// taking the listings cost more here than it saved (median 200 against
// 170 us for a view of 162 paths; stats split between two threads, 260).
func (pr *prebuiltRuleset) unchanged() bool {
	confirmed := make([]bool, len(pr.hint.view))
	if pr.mounts >= 0 && len(pr.listed) > 0 {
		for _, g := range pr.listed {
			g.confirm(pr, pr.buf, confirmed)
		}
		if mountsChanged(pr.mounts) {
			clear(confirmed)
		}
	}
	for i := range pr.hint.view {
		if !confirmed[i] && !pr.same(i) {
			return false
		}
	}
	return true
}

// confirm lists g's directory as it is now and marks each entry that
// still has the inode number its rule holds.
func (g *listedDir) confirm(pr *prebuiltRuleset, buf []byte, confirmed []bool) {
	fd, err := unix.Open(g.dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Dev != g.dev {
		return
	}
	for {
		n, err := unix.Getdents(fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n <= 0 {
			return
		}
		// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name (NUL-terminated).
		for b := buf[:n]; len(b) >= 19; {
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				return
			}
			name := b[19:reclen]
			for j, c := range name {
				if c == 0 {
					name = name[:j]
					break
				}
			}
			if i, ok := g.names[string(name)]; ok && binary.NativeEndian.Uint64(b[:8]) == pr.ids[i].ino {
				confirmed[i] = true
			}
			b = b[reclen:]
		}
	}
}

// mountsChanged reports whether the mount table changed since the watch
// fd (of /proc/thread-self/mountinfo) was opened, or it cannot tell.
func mountsChanged(fd int) bool {
	p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLPRI}}
	for {
		n, err := unix.Poll(p, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err != nil || n != 0 && p[0].Revents&(unix.POLLPRI|unix.POLLERR|unix.POLLNVAL) != 0
	}
}

// same reports whether hinted path i still names the file its rule holds
// (a path missing then must still be missing).
func (pr *prebuiltRuleset) same(i int) bool {
	var st unix.Stat_t
	err := unix.Stat(pr.hint.view[i], &st)
	if pr.ids[i].missing {
		return errors.Is(err, unix.ENOENT)
	}
	return err == nil && st.Dev == pr.ids[i].dev && st.Ino == pr.ids[i].ino
}

// close closes the prebuilt ruleset and its watch on the mount table.
func (pr *prebuiltRuleset) close() {
	unix.Close(pr.fd)
	pr.closeWatch()
}

// closeWatch closes the watch on the mount table.
func (pr *prebuiltRuleset) closeWatch() {
	if pr.mounts >= 0 {
		unix.Close(pr.mounts)
		pr.mounts = -1
	}
}
