package seccomp

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Eval runs prog over one call as the kernel does (loads are 32-bit
// words of seccomp_data at fixed offsets, in the native byte order) and
// returns the action it reaches. It knows the instructions this package
// emits; another, a load past the arguments or a program that falls off
// its end is an error.
func Eval(prog []unix.SockFilter, auditArch uint32, nr uint32, args ...uint64) (uint32, error) {
	word := func(off uint32) (uint32, error) {
		switch {
		case off == OffNr:
			return nr, nil
		case off == OffArch:
			return auditArch, nil
		case off >= offArgs && off < offArgs+48:
			i := (off - offArgs) / 8
			var a uint64
			if int(i) < len(args) {
				a = args[i]
			}
			if (off-offArgs)%8 == 0 == littleEndian() {
				return uint32(a), nil
			}
			return uint32(a >> 32), nil
		}
		return 0, fmt.Errorf("seccomp: load of offset %d", off)
	}
	var acc uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		switch in.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			w, err := word(in.K)
			if err != nil {
				return 0, err
			}
			acc = w
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			if jumpTaken(in, acc) {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		case unix.BPF_RET | unix.BPF_K:
			return in.K, nil
		default:
			return 0, fmt.Errorf("seccomp: instruction %#x at %d", in.Code, pc)
		}
	}
	return 0, fmt.Errorf("seccomp: the program of %d instructions fell off its end", len(prog))
}

// jumpTaken reports whether the conditional jump in takes its true branch
// with the accumulator acc.
func jumpTaken(in unix.SockFilter, acc uint32) bool {
	switch in.Code &^ (unix.BPF_JMP | unix.BPF_K) {
	case unix.BPF_JEQ:
		return acc == in.K
	case unix.BPF_JGE:
		return acc >= in.K
	default: // BPF_JSET
		return acc&in.K != 0
	}
}
