//go:build unix

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// lookPath resolves a command name with the sandbox's PATH.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	pathVar := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathVar = v
		}
	}
	for _, dir := range filepath.SplitList(pathVar) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", errors.New("command not found")
}

// applyRlimits sets the per-process caps; memory and processes only where
// no cgroup carries them.
func applyRlimits(cfg *initConfig) []Mechanism {
	l := cfg.Limits
	var set []string
	var errs []string
	lim := func(name string, res int, v uint64, hard uint64) {
		if res < 0 {
			errs = append(errs, fmt.Sprintf("%s: no such rlimit on %s", name, runtime.GOOS))
			return
		}
		r := rlimitOf(v, hard)
		if err := unix.Setrlimit(res, &r); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", name, err))
			return
		}
		set = append(set, fmt.Sprintf("%s=%d", name, v))
	}
	lim("core", unix.RLIMIT_CORE, 0, 0)
	if l.Files > 0 {
		var cur unix.Rlimit
		v := uint64(l.Files)
		if unix.Getrlimit(unix.RLIMIT_NOFILE, &cur) == nil && rlimitMax(cur) < v {
			v = rlimitMax(cur)
		}
		lim("nofile", unix.RLIMIT_NOFILE, v, v)
	}
	if l.CPU > 0 {
		// Soft and hard equal: SIGKILL at the limit, since runtimes such
		// as Go's ignore SIGXCPU.
		s := uint64((l.CPU + 999_999_999) / 1_000_000_000)
		lim("cpu", unix.RLIMIT_CPU, s, s)
	}
	if l.Memory > 0 && !cfg.CgroupMemory {
		for _, r := range memoryRlimits(l.Memory) {
			lim(r.name, r.res, r.v, r.v)
		}
	}
	if l.Procs > 0 && !cfg.CgroupPids {
		lim("nproc", rlimitNproc, uint64(l.Procs), uint64(l.Procs))
	}
	if len(errs) > 0 {
		return []Mechanism{{"rlimits", StateFailed, strings.Join(errs, "; ")}}
	}
	return []Mechanism{{"rlimits", StateApplied, strings.Join(set, " ")}}
}

// memoryRlimit is the rlimit that carries the memory cap itself where no
// cgroup does: on Linux RLIMIT_DATA, elsewhere RLIMIT_AS.
//
// RLIMIT_AS counts every mapping, reservations included: V8 reserves
// about 10 GiB of PROT_NONE address space for each WebAssembly memory,
// and the Go runtime and JVMs reserve heap ranges far larger than what
// they use, so an address-space cap at the memory cap broke them
// (RangeError from `new WebAssembly.Memory`) while they used a few MiB.
// Since Linux 4.7 RLIMIT_DATA counts the private writable mappings (brk,
// anonymous and private file mappings with write permission, not the
// stack), which is what a process can actually fill; a reservation counts
// once it is made writable, so a memory bomb still fails at the cap.
// macOS enforces neither well; the floor keeps RLIMIT_AS there, which it
// honours for some allocations. OpenBSD has no RLIMIT_AS: RLIMIT_DATA.
func memoryRlimit() (name string, resource int) {
	if runtime.GOOS == "linux" || rlimitAS < 0 {
		return "data", unix.RLIMIT_DATA
	}
	return "as", rlimitAS
}

// addressSpaceFactor and minAddressSpace size the address-space backstop
// of a memory cap carried by rlimits (addressSpaceBackstop).
const (
	addressSpaceFactor = 4
	minAddressSpace    = 1 << 30
)

// addressSpaceBackstop is RLIMIT_AS under a memory cap mem carried by
// rlimits: 4 times the cap, at least 1 GiB. RLIMIT_DATA does not count
// shared memory: MAP_SHARED|MAP_ANONYMOUS mappings and memfds (and a
// tmpfs file mapped shared) are shmem pages, so under a 256 MiB cap a
// process filled 1 GiB of either. The address space counts them. The
// factor keeps what reserves address space it never fills working under
// the default cap (4 GiB: 16 GiB of address space): node starts (about
// 0.7 GiB reserved) and one WebAssembly memory (10 GiB reserved) fits
// from a 3 GiB cap; a Go program (0.7 GiB reserved, 1.7 GiB race-built)
// starts under the 1 GiB floor, a race-built one from a 512 MiB cap.
func addressSpaceBackstop(mem int64) uint64 {
	if mem > math.MaxInt64/addressSpaceFactor {
		return math.MaxUint64
	}
	return uint64(max(addressSpaceFactor*mem, minAddressSpace))
}

// rlimitValue is one rlimit to set, soft and hard alike.
type rlimitValue struct {
	name string
	res  int
	v    uint64
}

// memoryRlimits are the rlimits that carry the memory cap mem where no
// cgroup does. On Linux: RLIMIT_DATA at the cap (memoryRlimit), the
// address-space backstop (addressSpaceBackstop), and RLIMIT_FSIZE at the
// cap, which bounds how far one memfd or file grows (ftruncate, write
// and fallocate past it fail with EFBIG, and SIGXFSZ ends a process that
// does not handle it). The cap is still partial (memoryRlimitsDetail):
// rlimits are per process, so N processes get N times it.
func memoryRlimits(mem int64) []rlimitValue {
	name, res := memoryRlimit()
	rs := []rlimitValue{{name, res, uint64(mem)}}
	if runtime.GOOS == "linux" {
		rs = append(rs, rlimitValue{"as", rlimitAS, addressSpaceBackstop(mem)}, rlimitValue{"fsize", unix.RLIMIT_FSIZE, uint64(mem)})
	}
	return rs
}

// memoryRlimitsDetail says what memoryRlimits set for mem, and that the
// cap they carry is partial.
func memoryRlimitsDetail(mem int64) string {
	var set []string
	for _, r := range memoryRlimits(mem) {
		set = append(set, fmt.Sprintf("%s=%d", r.name, r.v))
	}
	d := strings.Join(set, " ") + " (set at exec); memory cap partial: per process (N processes get N times it)"
	if runtime.GOOS == "linux" {
		d += fmt.Sprintf(", shared memory and memfds bounded by the address space (%d times the cap, at least %s) and the file size (the cap)", addressSpaceFactor, formatBytes(minAddressSpace))
	}
	return d
}

// memoryRlimitName says in words what memoryRlimit bounds.
func memoryRlimitName() string {
	if name, _ := memoryRlimit(); name == "data" {
		return "private writable memory (data)"
	}
	return "address space"
}

// floorMain is the floor backend's stage: it takes the rlimits (which the
// parent cannot set on a child it starts through os/exec) and execs the
// command. Its config arrives as JSON on fd 3.
func floorMain() int {
	cfgF := os.NewFile(3, "config")
	unix.CloseOnExec(3)
	var cfg initConfig
	if err := json.NewDecoder(cfgF).Decode(&cfg); err != nil {
		fmt.Fprintf(os.Stderr, "ioh-lsp sandbox: floor stage config: %v\n", err)
		return 125
	}
	cfgF.Close()
	if m := applyRlimits(&cfg); m[0].State != StateApplied {
		fmt.Fprintf(os.Stderr, "ioh-lsp sandbox: rlimits: %s\n", m[0].Detail)
		return 125
	}
	path, err := lookPath(cfg.Argv[0], cfg.Env)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ioh-lsp sandbox: %s: %v\n", cfg.Argv[0], err)
		return 127
	}
	err = unix.Exec(path, cfg.Argv, cfg.Env)
	fmt.Fprintf(os.Stderr, "ioh-lsp sandbox: exec %s: %v\n", path, err)
	return 126
}
