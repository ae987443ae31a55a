package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

func candidates() []backend { return []backend{windowsBackend{}, floorBackend{}} }

// No re-executed stages on Windows: the Job Object is applied from the
// parent while the child is still suspended.
func stageMain(string) int { return 2 }

func trueArgv() []string { return []string{"cmd.exe", "/c", "exit 0"} }

// floorCommand starts the command suspended in a new process group; the
// Job Object is attached before it runs a single instruction.
func floorCommand(s *Spec, env []string) (*exec.Cmd, []Mechanism, func(), error) {
	cmd := exec.Command(s.Argv[0], s.Argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_SUSPENDED | windows.CREATE_NEW_PROCESS_GROUP}
	return cmd, []Mechanism{{"rlimits", StateUnavailable, "Windows has no rlimits; the Job Object carries the caps"}}, func() {}, nil
}

// procGroup is the run's Job Object.
type procGroup = *jobObject

type jobObject struct {
	h      windows.Handle
	limits jobLimits
}

// attachGroup creates the run's Job Object (kill-on-close; with full, the
// CPU, memory and process caps too), puts the suspended child in it and
// resumes the child's threads.
func attachGroup(cmd *exec.Cmd, s *Spec, full bool) (procGroup, []Mechanism, error) {
	jl := buildJobLimits(s.Limits, full)
	h, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("create job object: %w", err)
	}
	j := &jobObject{h: h, limits: jl}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = jl.Flags
	info.BasicLimitInformation.PerJobUserTimeLimit = jl.UserTime100ns
	info.BasicLimitInformation.ActiveProcessLimit = jl.ActiveProcesses
	info.JobMemoryLimit = uintptr(jl.JobMemory)
	if _, err := windows.SetInformationJobObject(h, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(h)
		return nil, nil, fmt.Errorf("set job limits: %w", err)
	}
	ph, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE|windows.PROCESS_QUERY_INFORMATION, false, uint32(cmd.Process.Pid))
	if err != nil {
		windows.CloseHandle(h)
		return nil, nil, fmt.Errorf("open process: %w", err)
	}
	defer windows.CloseHandle(ph)
	if err := windows.AssignProcessToJobObject(h, ph); err != nil {
		windows.CloseHandle(h)
		return nil, nil, fmt.Errorf("assign job object: %w", err)
	}
	if err := resumeThreads(uint32(cmd.Process.Pid)); err != nil {
		return j, nil, fmt.Errorf("resume: %w", err)
	}
	ms := []Mechanism{{"job-object", StateApplied, "kill-on-close"}}
	if full {
		ms = append(ms, Mechanism{"job-limits", StateApplied, fmt.Sprintf("flags %#x, cpu %d00ns, memory %d, processes %d", jl.Flags, jl.UserTime100ns, jl.JobMemory, jl.ActiveProcesses)})
	}
	return j, ms, nil
}

func resumeThreads(pid uint32) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(snap)
	var te windows.ThreadEntry32
	te.Size = uint32(unsafe.Sizeof(te))
	resumed := 0
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != pid {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		if err != nil {
			return err
		}
		_, rerr := windows.ResumeThread(th)
		windows.CloseHandle(th)
		if rerr != nil {
			return rerr
		}
		resumed++
	}
	if resumed == 0 {
		return errors.New("no thread to resume")
	}
	return nil
}

// killGroup terminates every process of the job and closes it.
func killGroup(_ *exec.Cmd, j procGroup) {
	if j == nil || j.h == 0 {
		return
	}
	_ = windows.TerminateJobObject(j.h, 1)
	_ = windows.CloseHandle(j.h)
	j.h = 0
}

func exitStatus(ps *os.ProcessState, _ error) (int, string) {
	if ps == nil {
		return 125, ""
	}
	return ps.ExitCode(), ""
}

// floorCapHit reads the job's accounting: CPU time or peak memory at the
// cap means the job limit ended the run.
func floorCapHit(s *Spec, ps *os.ProcessState, _ time.Duration, j procGroup) string {
	if j == nil || j.h == 0 || ps == nil || ps.ExitCode() == 0 {
		return ""
	}
	var acct struct {
		TotalUserTime, TotalKernelTime, ThisPeriodTotalUserTime, ThisPeriodTotalKernelTime int64
		TotalPageFaultCount, TotalProcesses, ActiveProcesses, TotalTerminatedProcesses     uint32
	}
	if windows.QueryInformationJobObject(j.h, windows.JobObjectBasicAccountingInformation,
		uintptr(unsafe.Pointer(&acct)), uint32(unsafe.Sizeof(acct)), nil) == nil &&
		j.limits.UserTime100ns > 0 && acct.TotalUserTime >= j.limits.UserTime100ns {
		return CapCPU
	}
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	if windows.QueryInformationJobObject(j.h, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil) == nil &&
		j.limits.JobMemory > 0 && uint64(info.PeakJobMemoryUsed) >= j.limits.JobMemory {
		return CapMemory
	}
	return ""
}
