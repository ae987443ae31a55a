package sandbox

import (
	"errors"
	"fmt"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/rootfs"
)

// The part of the linux tier's private root that no run's config decides
// is built by prepareRoot: the interim root, the sealed mask source, a
// fresh /proc with its protections and the run's own boot id, the minimal
// /dev, the private /tmp, and a fresh sysfs with its masks. It depends
// only on the namespaces the stage was started in, so a stage started
// ahead of its run (warm_linux.go) can build it while it waits for its
// config; setupRoot then moves the pieces into the private root, one
// mount call each. A stage that did not prepare has setupRoot do it
// first, the same way.

// Where the pieces are once the interim root is the root. Everything but
// the private root lies on workDir, a tmpfs of its own, so that one
// detach (switchRoot) takes it all: the host's tree, the mask source,
// what was prepared and not used, the stage's and the scratch layers'
// private upper directories.
const (
	workDir = "/w"
	// hostRoot is the host's root, where pivot_root put it.
	hostRoot = workDir + "/oldroot"
	// hideSrc is a small tmpfs sealed read-only, nosuid, nodev and
	// noexec once filled: masks bind its empty file or directory (both
	// mode 000) and the boot id binds its file. A bind copies the flags
	// of the mount it comes from, so each takes one mount call, not a
	// bind and a remount.
	hideSrc = workDir + "/hide"
	// preDir holds proc, dev, tmp and sys, each ready to be moved into
	// the private root.
	preDir = workDir + "/pre"
	// plainRoot is the private root of a run without a view bound ahead
	// (rootfs_hint_linux.go): a tmpfs with the fresh mounts' mount
	// points, or the host root bound over it (mountRoot). Whichever
	// private root the run takes is moved out of workDir before workDir
	// is detached (switchRoot).
	plainRoot = workDir + "/root"
)

// privateRoot is where the run's private root is built in the interim
// root: plainRoot, or the one bound ahead from a hint (useHintedView).
var privateRoot = plainRoot

// prepared is what prepareRoot did: err fails the run's setup; sysErr
// (no fresh sysfs: the stage shares the host's network namespace, or the
// kernel refused) and sysFailed (masks on it that failed) are reported
// by hideHostInfo only if the run uses the fresh sysfs.
var prepared struct {
	done      bool
	interim   int // O_PATH descriptor of the interim root
	err       error
	sysErr    error
	sysFailed []string
	bootErr   error
	// at says where each fresh mount (/proc, /dev, /tmp, /sys) is: below
	// preDir, or already in the private root bound ahead (prebindView).
	at map[string]string
	// hideIDs are the mask source's empty file and directory, which a
	// masked path shows (rootfs.MaskedAhead).
	hideIDs [2]rootfs.PathID
}

// prepareRoot builds the prepared pieces on a fresh tmpfs over /tmp and
// pivots into it (the interim root; the host root is at hostRoot), then
// changes this process's root to hostRoot: until setupRoot changes it
// back (enterInterim), host paths (a config's cgroup files) resolve as
// before. pivot_root visits every thread of the machine (it moves the
// root and working directory of each that used the old root), about
// 0.1 ms here, so it is done ahead too. A stage started with a hint of its
// run's view (hint: stageHint, stage_hint_linux.go) binds that view
// too (rootfs_hint_linux.go). It runs once per process.
func prepareRoot(hint []string) {
	if prepared.done {
		return
	}
	prepared.done = true
	prepared.err = prepareInterim(hint)
}

func prepareInterim(hint []string) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	// /tmp is the base because every system has it; the mount only
	// exists in this namespace.
	const base = "/tmp"
	if err := unix.Mount("tmpfs", base, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=64m"); err != nil {
		return fmt.Errorf("mount interim root: %w", err)
	}
	prepared.at = map[string]string{"/proc": preDir, "/dev": preDir, "/tmp": preDir, "/sys": preDir}
	if err := unix.Mkdir(base+workDir, 0o755); err != nil {
		return fmt.Errorf("interim root %s: %w", workDir, err)
	}
	if err := unix.Mount("tmpfs", base+workDir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=64m"); err != nil {
		return fmt.Errorf("mount interim work: %w", err)
	}
	for _, d := range []string{hostRoot, hideSrc, plainRoot, preDir, preDir + "/proc", preDir + "/dev", preDir + "/tmp", preDir + "/sys"} {
		if err := unix.Mkdir(base+d, 0o755); err != nil {
			return fmt.Errorf("interim root %s: %w", d, err)
		}
	}
	// The private root of a run with a read view (mountRoot): a tmpfs
	// with the mount points of the fresh mounts.
	if err := unix.Mount("tmpfs", base+plainRoot, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=1m"); err != nil {
		return fmt.Errorf("mount private root: %w", err)
	}
	for _, d := range []string{"/proc", "/dev", "/tmp"} {
		if err := unix.Mkdir(base+plainRoot+d, 0o755); err != nil {
			return fmt.Errorf("private root %s: %w", d, err)
		}
	}
	if err := prepareHide(base + hideSrc); err != nil {
		return err
	}
	pre := base + preDir
	if err := unix.Mount("proc", pre+"/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	for _, p := range []string{"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus"} {
		if err := rootfs.BindRO(pre+p, pre+p); err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("protect %s: %w", p, err)
		}
	}
	prepared.bootErr = unix.Mount(base+hideSrc+"/bootid", pre+"/proc/sys/kernel/random/boot_id", "", unix.MS_BIND, "")
	if err := setupDev(pre+"/dev", "/dev"); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", pre+"/tmp", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, tmpOpts); err != nil {
		return fmt.Errorf("mount private /tmp: %w", err)
	}
	if err := unix.Mkdir(pre+privateHome, 0o700); err != nil {
		return fmt.Errorf("private home: %w", err)
	}
	// sysfs shows the network devices of the mounting namespace: only a
	// stage with a network namespace of its own can mount one (and only a
	// run without network uses it).
	prepared.sysErr = unix.Mount("sysfs", pre+"/sys", "sysfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
	if prepared.sysErr == nil {
		for _, p := range sysfsMasked {
			if err := rootfs.Mask(base+hideSrc, pre+p); err != nil {
				prepared.sysFailed = append(prepared.sysFailed, p+": "+err.Error())
			}
		}
	}
	if err := unix.PivotRoot(base, base+hostRoot); err != nil {
		return fmt.Errorf("pivot to interim root: %w", err)
	}
	fd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("interim root: %w", err)
	}
	prepared.interim = fd
	// The Landlock rules for the prepared /tmp, /dev/shm and devices are
	// made from them here, before a hinted root may take them.
	preparePID1Rules(preDir) // pid1_landlock_linux.go
	prebindView(hint)
	if err := unix.Chroot(hostRoot); err != nil {
		return fmt.Errorf("host root: %w", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return fmt.Errorf("host root: %w", err)
	}
	return nil
}

// enterInterim makes the interim root prepareRoot pivoted into this
// process's root and working directory again.
func enterInterim() error {
	if err := unix.Fchdir(prepared.interim); err != nil {
		return fmt.Errorf("enter interim root: %w", err)
	}
	if err := unix.Chroot("."); err != nil {
		return fmt.Errorf("enter interim root: %w", err)
	}
	return unix.Close(prepared.interim)
}

// prepareHide fills and seals the mask source at dir.
func prepareHide(dir string) error {
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0755,size=16k"); err != nil {
		return fmt.Errorf("mount mask source: %w", err)
	}
	if err := rootfs.CreateFile(dir+"/file", 0o000, nil); err != nil {
		return fmt.Errorf("mask source: %w", err)
	}
	if err := unix.Mkdir(dir+"/dir", 0o000); err != nil {
		return fmt.Errorf("mask source: %w", err)
	}
	if err := rootfs.CreateFile(dir+"/bootid", 0o444, newBootID()); err != nil {
		return fmt.Errorf("boot id: %w", err)
	}
	flags := uintptr(unix.MS_REMOUNT | unix.MS_BIND | unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC)
	if err := unix.Mount("", dir, "", flags, ""); err != nil {
		return fmt.Errorf("seal mask source: %w", err)
	}
	for i, p := range []string{dir + "/file", dir + "/dir"} {
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return fmt.Errorf("mask source: %w", err)
		}
		prepared.hideIDs[i] = rootfs.PathID{State: rootfs.PathBound, Dev: st.Dev, Ino: st.Ino}
	}
	return nil
}

// setupDev mounts a minimal /dev at dev: a few safe device nodes of the
// host's /dev (at hostDev) bound in, the standard symlinks, and a private
// /dev/shm. Each node is the host's own inode: its bind is made read-only
// (reads and writes of a device still work; chmod, chown, touch and
// xattrs of the node do not, which for a caller that is root would
// change the host's /dev/null for the whole machine), nosuid and noexec.
func setupDev(dev, hostDev string) error {
	if err := unix.Mount("tmpfs", dev, "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755,size=64k"); err != nil {
		return fmt.Errorf("mount /dev: %w", err)
	}
	for _, n := range []string{"null", "zero", "full", "random", "urandom", "tty"} {
		dst := dev + "/" + n
		if err := rootfs.MakeNode(dst, false); err != nil {
			return fmt.Errorf("/dev/%s: %w", n, err)
		}
		if err := unix.Mount(hostDev+"/"+n, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind /dev/%s: %w", n, err)
		}
		if err := rootfs.SetMountAttr(dst, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NOEXEC); err != nil {
			return fmt.Errorf("seal /dev/%s: %w", n, err)
		}
	}
	for name, target := range map[string]string{
		"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1",
		"stderr": "/proc/self/fd/2", "core": "/proc/kcore",
	} {
		if err := unix.Symlink(target, dev+"/"+name); err != nil {
			return fmt.Errorf("/dev/%s: %w", name, err)
		}
	}
	shm := dev + "/shm"
	if err := unix.Mkdir(shm, 0o1777); err != nil {
		return fmt.Errorf("/dev/shm: %w", err)
	}
	if err := unix.Mount("tmpfs", shm, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, tmpOpts); err != nil {
		return fmt.Errorf("mount /dev/shm: %w", err)
	}
	return nil
}

// switchRoot makes privateRoot this process's root and returns detach,
// which leaves nothing else reachable: one detach of workDir takes the
// host's tree and every interim mount (one RCU grace period, which any
// unmount waits for; PID 1 overlaps it with its fork thread's
// restrictions, pid1_fork_linux.go). Before it, the private root is moved
// (from workDir, where it was built) over the interim root's own root and
// becomes this process's root. Not pivot_root, which visits every thread
// of the machine to move the roots of those that used the old one (none
// here). Below the private root only the interim tmpfs is left,
// read-only, holding the mount point of workDir and, once detach has run,
// nothing but that empty directory;
// reaching it would take chroot, which the command can neither do (no
// capabilities) nor call (seccomp). detach finds workDir through a
// descriptor opened before the move: no path of the new root leads there.
// Until detach has succeeded the run must not report or start anything.
func switchRoot() (detach func() error, err error) {
	work, err := unix.Open(workDir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("interim work: %w", err)
	}
	if err := enterPrivateRoot(); err != nil {
		unix.Close(work)
		return nil, err
	}
	return func() error {
		// The descriptor's magic link in the private root's fresh /proc
		// names the mount itself.
		err := unix.Unmount("/proc/self/fd/"+strconv.Itoa(work), unix.MNT_DETACH)
		unix.Close(work)
		if err != nil {
			return fmt.Errorf("detach old root: %w", err)
		}
		return nil
	}, nil
}

// enterPrivateRoot seals the interim root, moves privateRoot over it and
// changes this process's root and working directory to it.
func enterPrivateRoot() error {
	// What is left below the private root is read-only too.
	flags := uintptr(unix.MS_REMOUNT | unix.MS_BIND | unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC)
	if err := unix.Mount("", "/", "", flags, ""); err != nil {
		return fmt.Errorf("seal interim root: %w", err)
	}
	if err := unix.Chdir(privateRoot); err != nil {
		return fmt.Errorf("chdir new root: %w", err)
	}
	if err := unix.Mount(".", "/", "", unix.MS_MOVE, ""); err != nil {
		return fmt.Errorf("move new root: %w", err)
	}
	if err := unix.Chroot("."); err != nil {
		return fmt.Errorf("enter new root: %w", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return fmt.Errorf("chdir: %w", err)
	}
	return nil
}
