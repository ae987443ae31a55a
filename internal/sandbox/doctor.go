package sandbox

import (
	"context"
	"fmt"
	"runtime"
)

// BackendReport is one backend's probe.
type BackendReport struct {
	Name       string      `json:"name"`
	Works      bool        `json:"works"`
	Error      string      `json:"error,omitempty"`
	Mechanisms []Mechanism `json:"mechanisms,omitempty"`
	// NetAllow says how the backend confines a run's network to the
	// egress proxy (Spec.NetProxy: --net-allow, the network.allow
	// list), or why it refuses such a run.
	NetAllow string `json:"net_allow"`
}

// DoctorReport says which backend a run would get on this machine and why.
type DoctorReport struct {
	OS       string          `json:"os"`
	Backend  string          `json:"backend"` // what an automatic run gets, "" if none works
	Reason   string          `json:"reason"`
	Backends []BackendReport `json:"backends"`
	// Defaults are the caps a run gets when it asks for none.
	Defaults string `json:"defaults"`
	// ProbeCaps are the caps each backend's probe ran with: the rlimits
	// in its mechanism list are these, not Defaults.
	ProbeCaps string `json:"probe_caps"`
	// InitProgram says what runs a contained run's stages: the small init
	// program next to the binary, or why the binary re-executes itself
	// (Linux; "" elsewhere).
	InitProgram string `json:"init_program,omitempty"`
	// NetAllow says which tier here enforces a network allow-list (a run
	// that reaches only the proxy) and how, or that none does and such a
	// run is refused.
	NetAllow string `json:"net_allow"`
}

// defaultsSummary says the default caps in words.
func defaultsSummary() string {
	d := DefaultLimits
	s := fmt.Sprintf("memory %d MiB (4 GiB or half of the RAM, whichever is smaller), %d processes, %d open files, wall %v, output %d KiB",
		d.Memory>>20, d.Procs, d.Files, d.Wall, d.Output>>10)
	if runtime.GOOS == "linux" {
		s += fmt.Sprintf(", private /tmp and /dev/shm %s each", formatBytes(defaultTempBytes))
		if t := tempBytes(d.Memory, false); t != defaultTempBytes {
			s += fmt.Sprintf(" (%s where no memory cgroup applies: half of the memory cap)", formatBytes(t))
		}
	}
	return s
}

// probeSummary says the probes' caps in words.
func probeSummary() string {
	p := probeLimits
	return fmt.Sprintf("memory %s, %d processes, %d open files, CPU %v per process, wall %v",
		formatBytes(p.Memory), p.Procs, p.Files, p.CPU, p.Wall)
}

// Doctor probes every backend of this platform by really spawning a
// trivial command under it (with memory and process caps, so the cgroup
// or rlimit mechanisms show), strongest first. It records the results for
// this process, so later automatic runs skip a backend that failed here.
func Doctor(ctx context.Context) *DoctorReport {
	rep := &DoctorReport{OS: runtime.GOOS, Defaults: defaultsSummary(), ProbeCaps: probeSummary(), InitProgram: initProgramSummary()}
	var passed []string
	for _, b := range candidates() {
		ms, err := b.probe(ctx)
		confines, how := netProxySupport(b.name()) // netproxy.go
		br := BackendReport{Name: b.name(), Works: err == nil, Mechanisms: ms, NetAllow: how}
		selMu.Lock()
		if err != nil {
			br.Error = explainFailure(b.name(), err)
			selFailed[b.name()] = br.Error
		} else if selChosen == "" {
			selChosen = b.name()
		}
		selMu.Unlock()
		rep.Backends = append(rep.Backends, br)
		if err != nil {
			passed = append(passed, fmt.Sprintf("%s: %s", b.name(), br.Error))
			continue
		}
		if rep.Backend == "" {
			// An automatic run gets this tier, and with it this answer.
			rep.NetAllow = "the " + b.name() + " tier a run gets here enforces it: " + how
			if !confines {
				rep.NetAllow = "the " + b.name() + " tier a run gets here cannot: " + how
			}
			rep.Backend = b.name()
			if len(passed) == 0 {
				rep.Reason = b.name() + " is the strongest backend for " + runtime.GOOS + " and it works here"
			} else {
				rep.Reason = "stronger backends failed: " + joinReasons(passed)
			}
		}
	}
	if rep.Backend == "" {
		rep.Reason = "no backend works: " + joinReasons(passed)
	}
	if rep.NetAllow == "" {
		rep.NetAllow = "no tier works here, so a run restricted to allowed hosts is refused"
	}
	return rep
}

// MeetsRequire reports whether a run under backend satisfies the required
// tier require (Spec.Require, the `sandbox.require` config key; ""
// accepts any backend).
func MeetsRequire(backend, require string) bool {
	return tierRank(backend) >= tierRank(require)
}

// probeLimits are the caps probes apply so their mechanisms get exercised.
var probeLimits = Limits{CPU: 10e9, Memory: 512 << 20, Procs: 512, Files: 256, Wall: 30e9, Output: 64 << 10}
