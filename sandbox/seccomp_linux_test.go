package sandbox

import (
	"testing"

	"github.com/elastic/go-seccomp-bpf/arch"
)

func TestSeccompPolicyAssembles(t *testing.T) {
	p, err := seccompPolicy()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Assemble(); err != nil {
		t.Fatalf("assemble: %v", err)
	}
	got := map[string]bool{}
	for _, n := range p.Syscalls[0].Names {
		got[n] = true
	}
	for _, must := range []string{"ptrace", "process_vm_readv", "mount", "bpf", "perf_event_open", "io_uring_setup", "keyctl", "unshare", "setns", "kexec_load", "finit_module"} {
		if !got[must] {
			t.Errorf("deny-list lacks %s", must)
		}
	}
	// Every name kept exists on the architectures the module ships for.
	for _, a := range []string{"amd64", "arm64"} {
		info, err := arch.GetInfo(a)
		if err != nil {
			t.Fatal(err)
		}
		for _, must := range []string{"ptrace", "bpf", "io_uring_setup", "clone3", "keyctl", "mount_setattr"} {
			if _, ok := info.SyscallNames[must]; !ok {
				t.Errorf("%s has no %s", a, must)
			}
		}
	}
}
