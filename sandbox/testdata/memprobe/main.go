// Command memprobe fills shared memory the memory rlimits must bound
// (TestContainMemoryShared, TestLinuxTierIPCBounded): "memfd N" grows a
// memfd to N bytes and touches every page through a shared mapping;
// "shmanon N" touches N bytes of a MAP_SHARED|MAP_ANONYMOUS mapping;
// "sysv N [COUNT]" makes COUNT (1) System V segments of N bytes, each
// attached, filled and detached, and leaves them (a detached segment
// keeps its pages). It exits 0 when the memory was had, 1 when it was
// refused. A program of its own, built
// without the race detector: a race-built test binary reserves more
// address space than a small cap's backstop leaves for the control.
package main

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: memprobe memfd|shmanon|sysv BYTES [COUNT]")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[2])
	count := 1
	if err == nil && len(os.Args) > 3 {
		count, err = strconv.Atoi(os.Args[3])
	}
	for i := 0; err == nil && i < count; i++ {
		if err = fill(os.Args[1], n); err != nil {
			err = fmt.Errorf("%d of %d: %w", i+1, count, err)
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "memprobe %s %s: %v\n", os.Args[1], os.Args[2], err)
		os.Exit(1)
	}
	fmt.Println("filled", n)
}

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
	case "shmanon":
	case "sysv":
		return fillSysV(n)
	default:
		return fmt.Errorf("unknown kind %q", kind)
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

func fillSysV(n int) error {
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
	return unix.SysvShmDetach(b)
}
