package rootfs

import (
	"crypto/rand"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// The part of the linux tier's private root that no run's config decides
// is built by Interim.Build: the interim root, the sealed mask source, a
// fresh /proc with its protections and the run's own boot id, the minimal
// /dev, the private /tmp, and a fresh sysfs with its masks. It depends
// only on the namespaces the stage was started in, so a stage started
// ahead of its run can build it while it waits for its config; the run's
// setup then moves the pieces into the private root, one mount call each
// (Interim.Move).

// Where the pieces are once the interim root is the root. Everything but
// the private root lies on WorkDir, a tmpfs of its own, so that one
// detach (SwitchRoot) takes it all: the host's tree, the mask source,
// what was prepared and not used, the private upper directories of
// overlays made there.
const (
	WorkDir = "/w"
	// HostRoot is the host's root, where pivot_root put it.
	HostRoot = WorkDir + "/oldroot"
	// HideSrc is a small tmpfs sealed read-only, nosuid, nodev and
	// noexec once filled: masks bind its empty file or directory (both
	// mode 000) and the boot id binds its file. A bind copies the flags
	// of the mount it comes from, so each takes one mount call, not a
	// bind and a remount.
	HideSrc = WorkDir + "/hide"
	// PreDir holds proc, dev, tmp and sys, each ready to be moved into
	// the private root.
	PreDir = WorkDir + "/pre"
	// PlainRoot is the private root of a run without a view bound ahead
	// (Prebind): a tmpfs with the fresh mounts' mount points, or the host
	// root bound over it. Whichever private root the run takes is moved
	// out of WorkDir before WorkDir is detached (SwitchRoot).
	PlainRoot = WorkDir + "/root"
	// HintedRoot is where a hinted view is bound (Prebind), next to the
	// plain private root.
	HintedRoot = WorkDir + "/view"
)

// Options are what the interim root's pieces are made with.
type Options struct {
	// TmpOpts are the mount options of the private /tmp and /dev/shm.
	TmpOpts string
	// Home is a directory made (mode 0700) on the private /tmp.
	Home string
	// SysMasked are the paths of the fresh sysfs masked.
	SysMasked []string
}

// Interim is what Build did. SysErr (no fresh sysfs: the stage shares
// the host's network namespace, or the kernel refused), SysFailed (its
// masks that failed) and BootErr (the boot id's bind) concern only a run
// that uses what they failed to make; the caller reports them then.
type Interim struct {
	SysErr    error
	SysFailed []string
	BootErr   error
	// HideIDs are the mask source's empty file and directory, which a
	// masked path shows (MaskedAhead).
	HideIDs [2]PathID
	fd      int // O_PATH descriptor of the interim root
	// at says where each fresh mount (/proc, /dev, /tmp, /sys) is: below
	// PreDir, or already in a private root (Move, Prebind).
	at map[string]string
}

// Build builds the pieces on a fresh tmpfs over /tmp and pivots into it
// (the interim root; the host root is at HostRoot). pivot_root visits
// every thread of the machine (it moves the root and working directory of
// each that used the old root), about 0.1 ms here, which is why it is
// done ahead too. The caller then changes this process's root to HostRoot
// (EnterHost) until its run's setup changes it back (Enter). It runs once
// per process, in a mount namespace of its own.
func (in *Interim) Build(o Options) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	// /tmp is the base because every system has it; the mount only
	// exists in this namespace.
	const base = "/tmp"
	if err := unix.Mount("tmpfs", base, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=64m"); err != nil {
		return fmt.Errorf("mount interim root: %w", err)
	}
	in.at = map[string]string{"/proc": PreDir, "/dev": PreDir, "/tmp": PreDir, "/sys": PreDir}
	if err := unix.Mkdir(base+WorkDir, 0o755); err != nil {
		return fmt.Errorf("interim root %s: %w", WorkDir, err)
	}
	if err := unix.Mount("tmpfs", base+WorkDir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=64m"); err != nil {
		return fmt.Errorf("mount interim work: %w", err)
	}
	for _, d := range []string{HostRoot, HideSrc, PlainRoot, PreDir, PreDir + "/proc", PreDir + "/dev", PreDir + "/tmp", PreDir + "/sys"} {
		if err := unix.Mkdir(base+d, 0o755); err != nil {
			return fmt.Errorf("interim root %s: %w", d, err)
		}
	}
	// The private root of a run with a read view: a tmpfs with the mount
	// points of the fresh mounts.
	if err := unix.Mount("tmpfs", base+PlainRoot, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=1m"); err != nil {
		return fmt.Errorf("mount private root: %w", err)
	}
	for _, d := range []string{"/proc", "/dev", "/tmp"} {
		if err := unix.Mkdir(base+PlainRoot+d, 0o755); err != nil {
			return fmt.Errorf("private root %s: %w", d, err)
		}
	}
	if err := in.prepareHide(base + HideSrc); err != nil {
		return err
	}
	pre := base + PreDir
	if err := unix.Mount("proc", pre+"/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	for _, p := range []string{"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus"} {
		if err := BindRO(pre+p, pre+p); err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("protect %s: %w", p, err)
		}
	}
	in.BootErr = unix.Mount(base+HideSrc+"/bootid", pre+"/proc/sys/kernel/random/boot_id", "", unix.MS_BIND, "")
	if err := setupDev(pre+"/dev", "/dev", o.TmpOpts); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", pre+"/tmp", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, o.TmpOpts); err != nil {
		return fmt.Errorf("mount private /tmp: %w", err)
	}
	if err := unix.Mkdir(pre+o.Home, 0o700); err != nil {
		return fmt.Errorf("private home: %w", err)
	}
	// sysfs shows the network devices of the mounting namespace: only a
	// stage with a network namespace of its own can mount one (and only a
	// run without network uses it).
	in.SysErr = unix.Mount("sysfs", pre+"/sys", "sysfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
	if in.SysErr == nil {
		for _, p := range o.SysMasked {
			if err := Mask(base+HideSrc, pre+p); err != nil {
				in.SysFailed = append(in.SysFailed, p+": "+err.Error())
			}
		}
	}
	if err := unix.PivotRoot(base, base+HostRoot); err != nil {
		return fmt.Errorf("pivot to interim root: %w", err)
	}
	fd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("interim root: %w", err)
	}
	in.fd = fd
	return nil
}

// EnterHost changes this process's root to the host's (HostRoot, from the
// interim root): until Enter changes it back, host paths (a config's
// cgroup files) resolve as before.
func EnterHost() error {
	if err := unix.Chroot(HostRoot); err != nil {
		return fmt.Errorf("host root: %w", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return fmt.Errorf("host root: %w", err)
	}
	return nil
}

// Enter makes the interim root Build pivoted into this process's root
// and working directory again.
func (in *Interim) Enter() error {
	if err := unix.Fchdir(in.fd); err != nil {
		return fmt.Errorf("enter interim root: %w", err)
	}
	if err := unix.Chroot("."); err != nil {
		return fmt.Errorf("enter interim root: %w", err)
	}
	return unix.Close(in.fd)
}

// Move moves the fresh mount d (/proc, /dev, /tmp, /sys) from where it is
// into the private root root, unless it is there already (bound ahead
// into a hinted root the run took, Prebind).
func (in *Interim) Move(d, root string) error {
	if in.at[d] == root {
		return nil
	}
	if err := unix.Mount(in.at[d]+d, root+d, "", unix.MS_MOVE, ""); err != nil {
		return err
	}
	in.at[d] = root
	return nil
}

// prepareHide fills and seals the mask source at dir.
func (in *Interim) prepareHide(dir string) error {
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0755,size=16k"); err != nil {
		return fmt.Errorf("mount mask source: %w", err)
	}
	if err := CreateFile(dir+"/file", 0o000, nil); err != nil {
		return fmt.Errorf("mask source: %w", err)
	}
	if err := unix.Mkdir(dir+"/dir", 0o000); err != nil {
		return fmt.Errorf("mask source: %w", err)
	}
	if err := CreateFile(dir+"/bootid", 0o444, newBootID()); err != nil {
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
		in.HideIDs[i] = PathID{State: PathBound, Dev: st.Dev, Ino: st.Ino}
	}
	return nil
}

// newBootID is a fresh random UUID, as the kernel prints a boot id.
func newBootID() []byte {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails (it crashes the program instead)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Appendf(nil, "%x-%x-%x-%x-%x\n", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// setupDev mounts a minimal /dev at dev: a few safe device nodes of the
// host's /dev (at hostDev) bound in, the standard symlinks, and a private
// /dev/shm (mounted with tmpOpts). Each node is the host's own inode: its
// bind is made read-only (reads and writes of a device still work; chmod,
// chown, touch and xattrs of the node do not, which for a caller that is
// root would change the host's /dev/null for the whole machine), nosuid
// and noexec.
func setupDev(dev, hostDev, tmpOpts string) error {
	if err := unix.Mount("tmpfs", dev, "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755,size=64k"); err != nil {
		return fmt.Errorf("mount /dev: %w", err)
	}
	for _, n := range []string{"null", "zero", "full", "random", "urandom", "tty"} {
		dst := dev + "/" + n
		if err := MakeNode(dst, false); err != nil {
			return fmt.Errorf("/dev/%s: %w", n, err)
		}
		if err := unix.Mount(hostDev+"/"+n, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind /dev/%s: %w", n, err)
		}
		if err := SetMountAttr(dst, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NOEXEC); err != nil {
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
