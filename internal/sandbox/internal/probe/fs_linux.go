package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

func write(a []string) error { return os.WriteFile(a[0], []byte("x"), 0o644) }

func read(a []string) error {
	b, err := os.ReadFile(a[0])
	if err == nil {
		os.Stdout.Write(b)
	}
	return err
}

func link(a []string) error {
	if err := os.Link(a[0], a[1]); err != nil {
		return err
	}
	f, err := os.OpenFile(a[1], os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteString("tampered\n")
	return err
}

func setxattr(a []string) error { return unix.Setxattr(a[0], a[1], []byte(a[2]), 0) }

func fchmodat(a []string) error {
	dfd, err := unix.Open(a[0], unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	mode, err := parseMode(a[2])
	if err != nil {
		return err
	}
	return unix.Fchmodat(dfd, a[1], mode, 0)
}

func fchmodOPath(a []string) error {
	fd, err := unix.Open(a[0], unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	mode, err := parseMode(a[1])
	if err != nil {
		return err
	}
	return unix.Fchmod(fd, mode)
}

func fchmod(a []string) error {
	f, err := os.Open(a[0])
	if err != nil {
		return err
	}
	defer f.Close()
	mode, err := parseMode(a[1])
	if err != nil {
		return err
	}
	return f.Chmod(os.FileMode(mode))
}

func parseMode(s string) (uint32, error) {
	m, err := strconv.ParseUint(s, 8, 32)
	if err != nil {
		return 0, fmt.Errorf("mode %q is not octal", s)
	}
	return uint32(m), nil
}

// setfcap writes struct vfs_cap_data, revision 2, little-endian: the
// permitted set cap_net_raw.
func setfcap(a []string) error {
	var v [20]byte
	binary.LittleEndian.PutUint32(v[0:], 0x02000000)
	binary.LittleEndian.PutUint32(v[4:], 1<<unix.CAP_NET_RAW)
	return unix.Setxattr(a[0], "security.capability", v[:], 0)
}

// fsNodumpFl is FS_NODUMP_FL, chattr's d.
const fsNodumpFl = 0x40

func setflags(a []string) error {
	f, err := os.Open(a[0])
	if err != nil {
		return err
	}
	defer f.Close()
	flags, err := unix.IoctlGetUint32(int(f.Fd()), unix.FS_IOC_GETFLAGS)
	if err != nil {
		return err
	}
	return unix.IoctlSetPointerInt(int(f.Fd()), unix.FS_IOC_SETFLAGS, int(flags|fsNodumpFl))
}

// setID gives PATH a set-user-ID or set-group-ID mode through one system
// call (METHOD), and succeeds when the file then carries the bit.
func setID(a []string) error {
	method, p := a[0], a[1]
	unix.Umask(0o022)
	if err := setIDBy(method, p); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.Mode()&(os.ModeSetuid|os.ModeSetgid) == 0 {
		return fmt.Errorf("%s: %s has mode %v, no set-id bit", method, p, fi.Mode())
	}
	return nil
}

// x86-64's legacy chmod(2), which arm64 lacks.
const sysChmodAMD64 = 90

// setIDMethods are the calls setid knows.
var setIDMethods = []string{"fchmodat", "setgid", "fchmod", "fchmodat2", "chmod", "open", "mknod"}

func setIDBy(method, p string) error {
	if !slices.Contains(setIDMethods, method) {
		return fmt.Errorf("unknown method %q (known: %v)", method, setIDMethods)
	}
	switch method {
	case "open":
		fd, err := unix.Open(p, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o4755)
		if err == nil {
			unix.Close(fd)
		}
		return err
	case "mknod":
		return unix.Mknodat(unix.AT_FDCWD, p, unix.S_IFREG|0o4755, 0)
	}
	if _, err := os.Lstat(p); err != nil {
		if err := os.WriteFile(p, []byte("#!/bin/sh\nid\n"), 0o755); err != nil {
			return err
		}
	}
	p0, err := unix.BytePtrFromString(p)
	if err != nil {
		return err
	}
	switch method {
	case "fchmodat": // what chmod(1) and os.Chmod use
		return unix.Fchmodat(unix.AT_FDCWD, p, 0o4755, 0)
	case "setgid":
		return unix.Fchmodat(unix.AT_FDCWD, p, 0o2755, 0)
	case "fchmod":
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		return unix.Fchmod(int(f.Fd()), 0o4755)
	case "fchmodat2":
		_, _, e := unix.Syscall6(452, ^uintptr(99) /* AT_FDCWD */, uintptr(unsafe.Pointer(p0)), 0o4755, 0, 0, 0)
		return errnoErr(e)
	case "chmod": // the legacy call, amd64 only
		_, _, e := unix.Syscall(sysChmodAMD64, uintptr(unsafe.Pointer(p0)), 0o4755, 0)
		return errnoErr(e)
	}
	return nil
}

// setIDAll tries each method on DIR/METHOD, printing "SETID METHOD" for
// each that worked and the error of each that did not; it always
// succeeds.
func setIDAll(a []string) error {
	for _, m := range a[1:] {
		if err := setID([]string{m, filepath.Join(a[0], m)}); err != nil {
			fmt.Printf("%s: %v\n", m, err)
		} else {
			fmt.Printf("SETID %s\n", m)
		}
	}
	return nil
}

func mountAllowsSetID(a []string) error {
	var st unix.Statfs_t
	if err := unix.Statfs(a[0], &st); err != nil {
		return err
	}
	if st.Flags&(unix.ST_NOSUID|unix.ST_NODEV) != 0 {
		return fmt.Errorf("%s is mounted nosuid/nodev (flags %#x)", a[0], st.Flags)
	}
	return nil
}

func errnoErr(e unix.Errno) error {
	if e != 0 {
		return e
	}
	return nil
}
