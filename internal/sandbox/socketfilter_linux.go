package sandbox

import (
	"fmt"
	"runtime"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/seccomp"
)

// applySocketFilter is the landlock tier's socket lock, a seccomp filter
// stacked on the deny-list and loaded in every run of the tier, with the
// network on or off: socket(2) works only for the families
// socketFamilies allows. Without the network every family is refused
// (Landlock's TCP rules do not cover UDP, raw or netlink sockets). Below
// Landlock ABI 9 AF_UNIX is refused too, with the network on as well:
// only from ABI 9 does Landlock keep connect(2) away from the host's
// pathname unix sockets (a terminal multiplexer's, a container
// runtime's, a session bus, an editor's), and a network namespace, which
// the tier lacks, would not either. socketpair(2), which pipes between a
// command's own processes use, still works. A run that reaches only a
// proxy (netProxy) gets TCP sockets of AF_INET besides: Landlock lets
// them connect to the proxy's port only (tierRuleset), and UDP (DNS),
// raw, netlink and IPv6 sockets stay refused.
func applySocketFilter(mode netMode) (Mechanism, error) {
	info, ok := seccomp.TableOf(runtime.GOARCH)
	if !ok {
		return Mechanism{}, fmt.Errorf("socket filter: no syscall table for %s", runtime.GOARCH)
	}
	network := mode == netAll
	prog, err := seccomp.SocketProg(info, seccomp.Families(network, unixSocketsConfined()))
	if mode == netProxy {
		prog, err = seccomp.SocketTCPProg(info, seccomp.Families(false, unixSocketsConfined()))
	}
	if err != nil {
		return Mechanism{}, err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
		return Mechanism{}, fmt.Errorf("load socket filter: %w", err)
	}
	detail := socketFilterDetail(network, landlockABI())
	if mode == netProxy {
		detail = "TCP over AF_INET besides (Landlock lets it connect to the proxy's port only); " + detail
	}
	return Mechanism{"socket-filter", StateApplied, detail}, nil
}

// socketFilterDetail says what the filter lets through and why.
func socketFilterDetail(network bool, abi int) string {
	var names []string
	for _, f := range seccomp.Families(network, abi >= 9) {
		names = append(names, f.Name)
	}
	allowed := "socket(2) refused for every family"
	if len(names) > 0 {
		allowed = "socket(2) only for " + strings.Join(names, ", ")
	}
	if abi >= 9 {
		return allowed + "; Landlock refuses connect(2) to unix sockets outside the sandbox"
	}
	return fmt.Sprintf("%s; AF_UNIX refused, the network on or off: Landlock ABI %d cannot keep connect(2) away from the host's unix sockets (needs 9); socketpair(2) works", allowed, abi)
}
