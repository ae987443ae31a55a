package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

func alloc(a []string) error {
	n, err := strconv.ParseInt(a[0], 10, 64)
	if err != nil {
		return fmt.Errorf("bytes %q: %w", a[0], err)
	}
	b := make([]byte, n)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	return nil
}

// reserve reserves a[0] bytes PROT_NONE (as V8 and Go runtimes do), makes
// a[1] of them writable and touches them.
func reserve(a []string) error {
	n, err := strconv.ParseInt(a[0], 10, 64)
	if err != nil {
		return fmt.Errorf("bytes %q: %w", a[0], err)
	}
	w, err := strconv.ParseInt(a[1], 10, 64)
	if err != nil || w > n {
		return fmt.Errorf("writable bytes %q: not a number up to %d", a[1], n)
	}
	m, err := unix.Mmap(-1, 0, int(n), unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return fmt.Errorf("reserve %d bytes: %w", n, err)
	}
	if err := unix.Mprotect(m[:w], unix.PROT_READ|unix.PROT_WRITE); err != nil {
		return fmt.Errorf("make %d bytes writable: %w", w, err)
	}
	for i := int64(0); i < w; i += 4096 {
		m[i] = 1
	}
	return nil
}

// fillAs fills shared memory of one kind, which RLIMIT_DATA does not
// count (TestContainMemoryShared, TestLinuxTierIPCBounded): BYTES of it,
// COUNT (1) times, then prints "filled BYTES".
func fillAs(kind string) func(a []string) error {
	return func(a []string) error {
		n, err := strconv.Atoi(a[0])
		if err != nil {
			return fmt.Errorf("bytes %q: %w", a[0], err)
		}
		count := 1
		if len(a) > 1 {
			if count, err = strconv.Atoi(a[1]); err != nil {
				return fmt.Errorf("count %q: %w", a[1], err)
			}
		}
		for i := 0; i < count; i++ {
			if err := fill(kind, n); err != nil {
				return fmt.Errorf("%d of %d: %w", i+1, count, err)
			}
		}
		fmt.Println("filled", n)
		return nil
	}
}

// fill touches n bytes of a memfd through a shared mapping (memfd), of
// a MAP_SHARED|MAP_ANONYMOUS mapping (shmanon) or of a System V segment
// left detached, which keeps its pages (sysv).
func fill(kind string, n int) error {
	fd, flags := -1, unix.MAP_SHARED|unix.MAP_ANONYMOUS
	switch kind {
	case "memfd":
		var err error
		if fd, err = unix.MemfdCreate("probe", 0); err != nil {
			return err
		}
		if err := unix.Ftruncate(fd, int64(n)); err != nil {
			return fmt.Errorf("ftruncate: %w", err)
		}
		flags = unix.MAP_SHARED
	case "sysv":
		return fillSysV(n, false)
	}
	m, err := unix.Mmap(fd, 0, n, unix.PROT_READ|unix.PROT_WRITE, flags)
	if err != nil {
		return fmt.Errorf("mmap: %w", err)
	}
	for i := 0; i < n; i += 4096 {
		m[i] = 1
	}
	return nil
}

// fillSysV makes a private System V segment of n bytes, attached, filled
// and detached; rm removes it after.
func fillSysV(n int, rm bool) error {
	id, err := unix.SysvShmGet(unix.IPC_PRIVATE, n, unix.IPC_CREAT|0o600)
	if err != nil {
		return fmt.Errorf("shmget: %w", err)
	}
	b, err := unix.SysvShmAttach(id, 0, 0)
	if err != nil {
		return fmt.Errorf("shmat: %w", err)
	}
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	err = unix.SysvShmDetach(b)
	if rm {
		unix.SysvShmCtl(id, unix.IPC_RMID, nil)
	}
	return err
}

// shmFill makes a[0] private segments of a[1] bytes each, kept (as a
// detached segment stays) unless a[2] is "rm".
func shmFill(a []string) error {
	n, err := strconv.Atoi(a[0])
	if err != nil {
		return fmt.Errorf("count %q: %w", a[0], err)
	}
	size, err := strconv.Atoi(a[1])
	if err != nil {
		return fmt.Errorf("size %q: %w", a[1], err)
	}
	for i := 0; i < n; i++ {
		if err := fillSysV(size, len(a) > 2); err != nil {
			return fmt.Errorf("segment %d: %w", i, err)
		}
	}
	return nil
}

func shmRead(a []string) error {
	id, err := strconv.Atoi(a[0])
	if err != nil {
		return fmt.Errorf("id %q: %w", a[0], err)
	}
	b, err := unix.SysvShmAttach(id, 0, unix.SHM_RDONLY)
	if err != nil {
		return err
	}
	defer unix.SysvShmDetach(b)
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		b = b[:i]
	}
	_, err = os.Stdout.Write(b)
	return err
}

func shmMake(a []string) error {
	key, err := strconv.Atoi(a[0])
	if err != nil {
		return fmt.Errorf("key %q: %w", a[0], err)
	}
	_, err = unix.SysvShmGet(key, 1<<20, unix.IPC_CREAT|unix.IPC_EXCL|0o600)
	return err
}

// mqMake is mq_open(3) of /NAME with O_CREAT|O_EXCL; the kernel takes the
// name without its slash.
func mqMake(a []string) error {
	p, err := unix.BytePtrFromString(a[0])
	if err != nil {
		return err
	}
	fd, _, e := unix.Syscall6(unix.SYS_MQ_OPEN, uintptr(unsafe.Pointer(p)), uintptr(unix.O_CREAT|unix.O_EXCL|unix.O_RDWR), 0o600, 0, 0, 0)
	if e != 0 {
		return e
	}
	return unix.Close(int(fd))
}
