package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"

	"golang.org/x/sys/unix"
)

// Hidden first arguments that make this binary act as a Linux sandbox
// stage.
const (
	initArg = stagePrefix + "init" // PID 1 of the sandbox: mounts, reaps, reports
	execArg = stagePrefix + "exec" // drops privileges, restricts, execs the command
)

func candidates() []backend {
	return []backend{linuxBackend{}, landlockBackend{}, floorBackend{}}
}

func stageMain(name string) int {
	switch name {
	case initArg:
		return initMain()
	case execArg:
		return execMain()
	case floorArg:
		return floorMain()
	case spawnArg:
		return spawnMain()
	case landlockArg:
		return landlockMain()
	case gocacheArg:
		return gocacheMain(os.Args[2:]) // gocache.go
	}
	return 2
}

// initMain is PID 1 of the sandbox. It reads its config from fd 3, builds
// the private root, starts the exec stage, reaps every process until the
// command exits, reports on fd 4, and exits, which makes the kernel kill
// whatever is left in the PID namespace.
func initMain() int {
	// Descriptors the caller inherited without close-on-exec stop here:
	// marked close-on-exec (not closed, the runtime may own some by now).
	_ = unix.CloseRange(5, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	// Catching every signal takes a round trip to the runtime's signal
	// thread per signal (about 1.3 ms under load); it overlaps reading
	// the config and building the root, and ends before the command
	// starts, so the command can never send one to an init that does not
	// catch it.
	deaf := make(chan struct{})
	go func() { ignoreSignals(); close(deaf) }() // ends after the last signal is caught
	cfg, _, report, fail, err := stageStart()
	if err != nil {
		return fail(err)
	}

	mechs := []Mechanism{
		{"user-namespace", StateApplied, fmt.Sprintf("uid %d mapped to 0", cfg.HostUID)},
		{"mount-namespace", StateApplied, ""},
		{"pid-namespace", StateApplied, "init dies with the run"},
		{"ipc-namespace", StateApplied, ""},
		{"uts-namespace", StateApplied, ""},
	}
	if cfg.Network {
		mechs = append(mechs, Mechanism{"net-namespace", StateUnavailable, "network requested"})
	} else {
		mechs = append(mechs, Mechanism{"net-namespace", StateApplied, "loopback only"})
	}
	fsMechs, err := setupRoot(&cfg)
	if err != nil {
		return fail(err)
	}
	mechs = append(mechs, fsMechs...)
	_ = unix.Sethostname([]byte("ioh-sandbox"))
	if !cfg.Network {
		if err := loopbackUp(); err != nil {
			mechs = append(mechs, Mechanism{"loopback", StateFailed, err.Error()})
		}
	}
	<-deaf
	return runExecStage(&cfg, mechs, report)
}

// ignoreSignals makes PID 1 deaf to every signal the command can send it.
// The kernel delivers a signal from inside the PID namespace to its init
// only when init handles it; the Go runtime handles all of them, and one
// it does not pass to os/signal (SEGV, BUS, ABRT, ILL, FPE, TRAP, SYS,
// QUIT sent with kill) crashes PID 1 with a stack dump and ends the run.
// Notify with no signal list takes every catchable signal into a channel
// nobody reads (os/signal drops what does not fit), so none has an effect;
// a real fault in PID 1 still panics. Catching, not ignoring, keeps the
// command's dispositions at their defaults across exec. SIGKILL and
// SIGSTOP from inside never reach an init.
func ignoreSignals() {
	signal.Notify(make(chan os.Signal, 1))
}

// loopbackUp brings up lo in the new network namespace, so servers a
// command starts on 127.0.0.1 work.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback up: %w", err)
	}
	return nil
}

// stageStart is the handshake every re-executed stage (PID 1, the
// landlock runner) begins with: fd 3 carries its config from the caller,
// fd 4 takes its status lines back. report writes one status line; fail
// reports an error and returns the setup-failure exit code. The stage is
// made non-dumpable once the config is read.
func stageStart() (cfg initConfig, stF *os.File, report func(initStatus), fail func(error) int, err error) {
	cfgF := os.NewFile(3, "config")
	stF = os.NewFile(4, "status")
	unix.CloseOnExec(3)
	unix.CloseOnExec(4)
	// The first report that carries mechanisms also names the program
	// the stages run in (the small init program or this whole binary).
	named := false
	report = func(st initStatus) {
		if !named && len(st.Mechanisms) > 0 {
			st.Mechanisms = append([]Mechanism{initProgramMechanism()}, st.Mechanisms...)
			named = true
		}
		b, _ := json.Marshal(st)
		_, _ = stF.Write(append(b, '\n'))
	}
	fail = func(err error) int {
		report(initStatus{Error: err.Error()})
		return 125
	}
	dec := json.NewDecoder(cfgF)
	if err := dec.Decode(&cfg); err != nil {
		return cfg, stF, report, fail, fmt.Errorf("read config: %w", err)
	}
	goLine = struct {
		r io.Reader
		f *os.File
	}{io.MultiReader(dec.Buffered(), cfgF), cfgF}
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	return cfg, stF, report, fail, nil
}

// goLine is what follows the config on fd 3: the caller writes "go" once
// the stage is in the run's cgroups. The caller sends the config first
// and moves the stage into its cgroups while the stage starts and builds
// its root: moving a process into a v1 memory cgroup waits for an RCU
// grace period (5-13 ms here), the largest single cost of a spawn.
var goLine struct {
	r io.Reader
	f *os.File
}

// awaitGo blocks until the caller confirms the stage is in the run's
// cgroups. Every process the stage forks after it is born there; one
// forked before would not be (moving a process does not move its
// children), so each stage calls it before forking the command or the
// exec stage. EOF or anything but "go" means the caller gave up (a failed
// join kills the stage): the command must not start.
func awaitGo() error {
	if goLine.r == nil {
		return errors.New("await cgroup join: no config channel")
	}
	// The config's encoder ends it with a newline the decoder left.
	var b [4]byte
	_, err := io.ReadFull(goLine.r, b[:])
	goLine.f.Close()
	goLine.r = nil
	if err != nil || string(b[:]) != "\ngo\n" {
		return fmt.Errorf("the caller did not confirm the run's cgroups (%q, %v)", b[:], err)
	}
	return nil
}
