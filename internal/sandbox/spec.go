package sandbox

import (
	"fmt"
	"io"
	"path/filepath"
	"time"
)

// Backend names (docs/cli.md#sandbox-run). The empty name asks the Runner
// for the strongest backend that works on this machine.
const (
	BackendLinux    = "linux"
	BackendLandlock = "landlock"
	BackendMacOS    = "macos"
	BackendWindows  = "windows"
	BackendFloor    = "floor"
)

// Cap names reported in Outcome.CapHit.
const (
	CapWall      = "wall"
	CapCPU       = "cpu"
	CapMemory    = "memory"
	CapProcesses = "processes"
	CapOutput    = "output"
)

// Mechanism states.
const (
	StateApplied     = "applied"
	StateUnavailable = "unavailable"
	StateFailed      = "failed"
)

// Spec is one contained run.
type Spec struct {
	// Argv is the command; Argv[0] is looked up in the sandbox's PATH when it
	// has no slash.
	Argv []string
	// Dir is the absolute working directory; "" means the first writable
	// root, else the current directory.
	Dir string
	// Env adds KEY=VALUE entries after the allow-listed parent environment.
	// Names that look like secrets are refused.
	Env []string
	// Writable roots: absolute directories the command may write. Everything
	// else is read-only (or invisible when masked).
	Writable []string
	// Network enables the whole host network; off means no network at
	// all, or only NetProxy when that is set.
	Network bool
	// NetProxy, with Network off, gives the command a network that
	// reaches only this proxy (an egress proxy the caller started outside
	// the sandbox, package netproxy): the tier confines every connection
	// to it and points HTTP_PROXY and its kin at it (docs/sandbox.md#network-through-the-proxy).
	// A tier that cannot confine the network to the proxy refuses the
	// run; none ever grants the whole network instead.
	NetProxy *NetProxy
	Limits   Limits
	// Stage, when set, is mounted at its Lower directory: the command sees
	// Lower with the staged changes on top, and its writes there are
	// discarded.
	Stage *Stage
	// View is what the command may read of the host besides Dir, the
	// writable roots and the stage, what stays hidden and what stays
	// read-only in the writable roots: built by a policy
	// (internal/sandbox/policy.Default is the product's), applied as is.
	// The zero View (no Read) reads nothing else, not even /usr: Run
	// refuses it in the tiers that apply a view (linux, landlock, macOS;
	// the floor and Windows tiers apply none).
	View View
	// Protected paths stay read-only inside the writable roots, as the
	// view's protected names do (.git, .ioh, …; rootfs_protect): what
	// the host runs later from a work tree (its configured git hooks
	// directory, the files its git configuration includes; the caller
	// reads them from the root's git configuration). One that does not
	// exist when the run starts is removed after it if the command made
	// it. Absolute; those outside every writable root do nothing.
	Protected []string
	// Scratch directories (already in the read view, e.g. a toolchain's
	// build cache) get a private writable layer in the linux tier: the
	// command reads what is there and may write, and its writes are
	// discarded with the run (scratch_linux.go). The landlock and floor
	// tiers give the one that is the run's Go build cache (GOCACHE) a
	// private layer through the go command's GOCACHEPROG (internal/gocache) and
	// leave the others read-only (landlock) or as they are (floor).
	Scratch []string
	// Backend names the backend to use; "" picks the strongest that works.
	Backend string
	// Require is the weakest tier the run may get (linux, landlock or
	// floor; "" accepts any): an automatic choice that would fall below
	// it, or a Backend below it, is an ErrBelowRequired error that says
	// why the stronger tiers failed.
	Require string

	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Stream, when set, receives all of the combined output as it comes
	// (up to the runaway cap), besides Stdout and Stderr's bounded copy:
	// a reader of test evidence judges a suite of any size from it.
	Stream io.Writer

	// pool is the Runner's pool the validated copy runs through (nil:
	// the cold path); set by Runner.Run, never by a caller.
	pool *Pool
}

// NetProxy is the proxy a restricted-network run reaches: one proxy
// listening on both addresses.
type NetProxy struct {
	// Socket is the host path of the proxy's unix socket.
	Socket string
	// TCP is the proxy's host address on loopback, 127.0.0.1:PORT.
	TCP string
}

// Limits caps a run; zero means the default (see DefaultLimits) or none.
type Limits struct {
	Wall   time.Duration // wall-clock time of the whole run
	CPU    time.Duration // CPU time per process
	Memory int64         // bytes
	Procs  int           // processes (and threads) at once
	Files  int           // open files per process
	Output int64         // bytes of stdout+stderr kept: the first and the last half (output.go); the run goes on
}

// DefaultLimits apply where a Spec leaves a limit at zero: a build and a
// test suite fit in them, a runaway command does not take the machine.
// Memory is 4 GiB or half of the RAM, whichever is smaller.
var DefaultLimits = Limits{
	Wall:   10 * time.Minute,
	Memory: defaultMemory(physicalMemory()),
	Procs:  1024,
	Files:  4096,
	Output: 1 << 20,
}

// defaultTempBytes caps each private temporary filesystem of the Linux
// backend (/tmp and /dev/shm); the files there count against the memory
// cap too (tempBytes).
const defaultTempBytes = 1 << 30

// tempBytes is the size of each private tmpfs of a run with memory cap
// mem. A memory cgroup charges a tmpfs page to the process that wrote it,
// so there the cgroup holds files and processes together under the cap
// and each tmpfs gets defaultTempBytes. Without one (the rlimit fallback)
// nothing else would count those pages, so each tmpfs gets half of the
// cap (at most defaultTempBytes): /tmp and /dev/shm together hold no more
// than the cap.
func tempBytes(mem int64, cgroupMemory bool) int64 {
	if cgroupMemory || mem <= 0 || mem/2 >= defaultTempBytes {
		return defaultTempBytes
	}
	return mem / 2
}

// formatBytes prints n in the largest binary unit that divides it.
func formatBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// minMemory is the smallest memory cap a Spec may ask for. Below a few
// MiB a run fails in ways that do not name the cap: a memory cgroup kills
// the stage that joins it before the command starts (exit 125), a data
// rlimit kills the shell's first allocation (SIGSEGV), and the private
// /tmp and /dev/shm (half of the cap each without a cgroup) hold nothing.
// 16 MiB starts a shell, the coreutils and a small Go program under every
// tier, with room for their temporary files.
const minMemory = 16 << 20

// defaultMemory is the default memory cap for a machine with ram bytes of
// memory (0: unknown).
func defaultMemory(ram int64) int64 {
	const ceiling = 4 << 30
	if ram <= 0 || ram/2 > ceiling {
		return ceiling
	}
	return ram / 2
}

func (l Limits) withDefaults() Limits {
	if l.Wall <= 0 {
		l.Wall = DefaultLimits.Wall
	}
	if l.Memory == 0 {
		l.Memory = DefaultLimits.Memory
	}
	if l.Procs == 0 {
		l.Procs = DefaultLimits.Procs
	}
	if l.Files <= 0 {
		l.Files = DefaultLimits.Files
	}
	if l.Output <= 0 {
		l.Output = DefaultLimits.Output
	}
	return l
}

// Mechanism is one protection and whether it applied.
type Mechanism struct {
	Name   string `json:"name"`
	State  string `json:"state"`
	Detail string `json:"detail,omitempty"`
}

// Outcome is what a run did.
type Outcome struct {
	// ExitCode is the command's exit code; 128+N when killed by signal N.
	ExitCode int `json:"exit_code"`
	// Signal names the signal that killed the command ("SIGKILL"), or "".
	Signal string `json:"signal"`
	// CapHit names the cap that ended the run, or "".
	CapHit string `json:"cap_hit"`
	// Backend is the backend that actually applied.
	Backend    string      `json:"backend"`
	Mechanisms []Mechanism `json:"mechanisms"`
	// Downgrade says why a stronger backend was not used, "" if none was
	// passed over.
	Downgrade string        `json:"downgrade,omitempty"`
	Truncated bool          `json:"output_truncated,omitempty"`
	Duration  time.Duration `json:"duration_ns"`
}

// validate checks a Spec and returns a normalized copy.
func (s *Spec) validate() (*Spec, error) {
	if s == nil || len(s.Argv) == 0 || s.Argv[0] == "" {
		return nil, ErrNoCommand
	}
	c := *s
	c.pool = nil
	c.Limits = s.Limits.withDefaults()
	if c.Limits.Memory < 0 || c.Limits.Procs < 0 || c.Limits.CPU < 0 {
		return nil, fmt.Errorf("%w: negative limit", ErrBadSpec)
	}
	if c.Limits.Memory < minMemory {
		return nil, fmt.Errorf("%w: memory cap of %s is below the %s a contained command needs to start", ErrBadSpec, formatBytes(c.Limits.Memory), formatBytes(minMemory))
	}
	c.Writable = nil
	for _, w := range s.Writable {
		abs, err := cleanAbs(w)
		if err != nil {
			return nil, fmt.Errorf("writable root %q: %w", w, err)
		}
		if abs == string(filepath.Separator) || abs == filepath.VolumeName(abs)+string(filepath.Separator) {
			return nil, fmt.Errorf("%w: writable root %q would expose the whole system", ErrBadSpec, w)
		}
		c.Writable = append(c.Writable, abs)
	}
	var err error
	if c.View, err = cleanView(s.View); err != nil {
		return nil, err
	}
	if c.Protected, err = cleanPaths("protected", s.Protected); err != nil {
		return nil, err
	}
	c.Protected = append(c.Protected, protectedNamesIn(c.View.ProtectedNames, c.Writable)...)
	scratch, err := cleanScratch(s.Scratch, c.Writable) // scratch.go
	if err != nil {
		return nil, err
	}
	c.Scratch = scratch
	if c.Dir == "" {
		switch {
		case c.Stage != nil:
			c.Dir = c.Stage.Lower()
		case len(c.Writable) > 0:
			c.Dir = c.Writable[0]
		default:
			c.Dir = "."
		}
	}
	abs, err := filepath.Abs(c.Dir)
	if err != nil {
		return nil, fmt.Errorf("working directory %q: %w", c.Dir, err)
	}
	c.Dir = abs
	c.View.Read = readOutsideOwnRoots(c.View.Read, c.ownRoots()) // view.go
	if _, err := checkEnv(c.Env); err != nil {
		return nil, err
	}
	if err := c.validateNetProxy(); err != nil {
		return nil, err
	}
	switch c.Require {
	case "", BackendLinux, BackendLandlock, BackendFloor:
	default:
		return nil, fmt.Errorf("%w: required tier %q (want linux, landlock or floor)", ErrBadSpec, c.Require)
	}
	switch c.Backend {
	case "", BackendLinux, BackendLandlock, BackendMacOS, BackendWindows, BackendFloor:
	default:
		return nil, fmt.Errorf("%w: %q (want linux, landlock, macos, windows or floor)", ErrUnknownBackend, c.Backend)
	}
	return &c, nil
}

// cleanAbs makes p absolute and resolves its symlinks, so a writable root
// names the directory that is really written.
func cleanAbs(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("resolve: %w", err)
	}
	return real, nil
}
