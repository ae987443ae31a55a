package sandbox

import (
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/seccomp"
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"

	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/sys/unix"
)

// compatProgram is a static x86-64 ELF executable that makes one system
// call through a foreign ABI and exits 0 when the call succeeded, else
// with the errno. i386: `int 0x80` with the call's i386 number and ebx,
// ecx, edx; x32: `syscall` with the x32 number (bit 30 set) and edi, esi,
// edx. An argument equal to bssArg is the address of 4 KiB of zeroed
// memory below 4 GiB (32-bit registers carry the pointer).
func compatProgram(nr uint32, args [3]uint32, x32 bool) []byte {
	const base, codeOff = 0x400000, 64 + 56
	le := binary.LittleEndian
	var code []byte
	mov := func(op byte, v uint32) { code = le.AppendUint32(append(code, op), v) }
	for i, v := range args {
		if v == bssArg {
			args[i] = base + 0x1000
		}
	}
	mov(0xB8, nr) // mov eax, nr
	if x32 {
		mov(0xBF, args[0]) // mov edi
		mov(0xBE, args[1]) // mov esi
		mov(0xBA, args[2]) // mov edx
		code = append(code, 0x0F, 0x05)
	} else {
		mov(0xBB, args[0])              // mov ebx
		mov(0xB9, args[1])              // mov ecx
		mov(0xBA, args[2])              // mov edx
		code = append(code, 0xCD, 0x80) // int 0x80
	}
	code = append(code, 0x85, 0xC0, 0x78, 12)   // test eax,eax; js fail
	mov(0xBF, 0)                                // mov edi, 0
	mov(0xB8, 231)                              // mov eax, exit_group
	code = append(code, 0x0F, 0x05)             // syscall
	code = append(code, 0xF7, 0xD8, 0x89, 0xC7) // fail: neg eax; mov edi, eax
	mov(0xB8, 231)
	code = append(code, 0x0F, 0x05)

	size := uint64(codeOff + len(code))
	h := make([]byte, 0, size)
	h = append(h, 0x7F, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	h = le.AppendUint16(h, 2)  // ET_EXEC
	h = le.AppendUint16(h, 62) // EM_X86_64
	h = le.AppendUint32(h, 1)
	h = le.AppendUint64(h, base+codeOff) // entry
	h = le.AppendUint64(h, 64)           // phoff
	h = le.AppendUint64(h, 0)            // shoff
	h = le.AppendUint32(h, 0)
	h = le.AppendUint16(h, 64) // ehsize
	h = le.AppendUint16(h, 56) // phentsize
	h = le.AppendUint16(h, 1)  // phnum
	h = le.AppendUint16(h, 0)
	h = le.AppendUint16(h, 0)
	h = le.AppendUint16(h, 0)
	h = le.AppendUint32(h, 1) // PT_LOAD
	h = le.AppendUint32(h, 7) // rwx
	h = le.AppendUint64(h, 0)
	h = le.AppendUint64(h, base)
	h = le.AppendUint64(h, base)
	h = le.AppendUint64(h, size)
	h = le.AppendUint64(h, 0x2000) // memsz: the page after the code is the bss
	h = le.AppendUint64(h, 0x1000)
	return append(h, code...)
}

const bssArg = 0xFFFF_FFF0

// TestContainForeignABI: a static program calling through the i386 ABI
// (int 0x80) or the x32 ABI must not reach calls the filter refuses by
// their native numbers.
func TestContainForeignABI(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the compat programs are x86-64 code; the filter's arm64 compat rule is covered by TestSeccompFilterDecisions")
	}
	requireLinuxBackend(t)
	dir := sandboxtest.Dir(t)
	cases := []struct {
		name string
		args [3]uint32
	}{
		{"keyctl", [3]uint32{0 /* KEYCTL_GET_KEYRING_ID */, 0xFFFFFFFD /* session keyring */, 1}},
		{"unshare", [3]uint32{unix.CLONE_NEWUSER}},
		{"io_uring_setup", [3]uint32{1, bssArg}},
		{"userfaultfd", [3]uint32{1 /* UFFD_USER_MODE_ONLY */}},
	}
	// Every program runs in one contained run (a run costs more than a
	// program), each printing its exit code; the programs sit in a
	// writable root, which every read view shows.
	var progs []string
	for _, abi := range []string{"i386", "x32"} {
		for _, c := range cases {
			var nr int
			var ok bool
			if abi == "x32" {
				nr, ok = arch.X32.SyscallNames[c.name]
				nr |= seccomp.X32SyscallBit
			} else {
				nr, ok = arch.I386.SyscallNames[c.name]
			}
			if !ok {
				t.Fatalf("no %s number for %s", abi, c.name)
			}
			prog := filepath.Join(dir, abi+"-"+c.name)
			if err := os.WriteFile(prog, compatProgram(uint32(nr), c.args, abi == "x32"), 0o755); err != nil {
				t.Fatal(err)
			}
			progs = append(progs, prog)
		}
	}
	script := `for p; do "$p"; echo "$p=$?"; done`
	out, output := run(t, Spec{Argv: append([]string{"sh", "-c", script, "sh"}, progs...), Writable: []string{dir}})
	if out.ExitCode != 0 {
		t.Fatalf("contained script: exit %d\n%s", out.ExitCode, output)
	}
	for _, prog := range progs {
		t.Run(filepath.Base(prog), func(t *testing.T) {
			if want := fmt.Sprintf("%s=%d\n", prog, unix.ENOSYS); !strings.Contains(output, want) {
				t.Errorf("contained: want %q (ENOSYS from the filter) in:\n%s", want, output)
			}
			err := exec.Command(prog).Run()
			var ee *exec.ExitError
			if strings.Contains(prog, "x32") && errors.As(err, &ee) && ee.ExitCode() == int(unix.ENOSYS) {
				t.Skip("control skipped: this kernel has no x32 ABI (CONFIG_X86_X32_ABI), so the case cannot be shown here")
			}
			if err != nil {
				t.Fatalf("uncontained control failed, so the case proves nothing: %v", err)
			}
		})
	}
}

// TestContainIoctlHighBits: the kernel reads ioctl's command as 32 bits,
// so TIOCSTI with higher bits set is still TIOCSTI.
func TestContainIoctlHighBits(t *testing.T) {
	requireLinuxBackend(t)
	h := helperPath(t)
	for _, cmd := range []uint64{unix.TIOCSTI, 1<<32 | unix.TIOCSTI, 0xFFFF_FFFF_0000_0000 | unix.TIOCSTI} {
		t.Run(fmt.Sprintf("%#x", cmd), func(t *testing.T) {
			argv := []string{h, helperArg, "ioctl-reaches", fmt.Sprint(cmd)}
			out, output := run(t, Spec{Argv: argv})
			if out.ExitCode != 1 || !strings.Contains(output, "operation not permitted") {
				t.Errorf("contained: exit %d, want the filter's EPERM; output:\n%s", out.ExitCode, output)
			}
			control(t, "/", argv...)
		})
	}
}
