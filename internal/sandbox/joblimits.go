package sandbox

// Windows Job Object limit flags (JOBOBJECT_BASIC_LIMIT_INFORMATION), kept
// here without a build tag so their computation is tested everywhere.
const (
	jobLimitJobTime                 = 0x00000004
	jobLimitActiveProcess           = 0x00000008
	jobLimitJobMemory               = 0x00000200
	jobLimitDieOnUnhandledException = 0x00000400
	jobLimitKillOnJobClose          = 0x00002000
)

// jobLimits is what a run's Job Object enforces.
type jobLimits struct {
	Flags           uint32
	UserTime100ns   int64  // PerJobUserTimeLimit, in 100 ns units
	JobMemory       uint64 // JobMemoryLimit, bytes
	ActiveProcesses uint32 // ActiveProcessLimit
}

// buildJobLimits maps Limits to a Job Object: always kill-on-close (the
// whole tree dies with the handle) and no error dialogs; CPU time, memory
// and process count when set. full is false for the floor, which only
// uses the job to kill the tree.
func buildJobLimits(l Limits, full bool) jobLimits {
	j := jobLimits{Flags: jobLimitKillOnJobClose | jobLimitDieOnUnhandledException}
	if !full {
		return j
	}
	if l.CPU > 0 {
		j.Flags |= jobLimitJobTime
		j.UserTime100ns = int64(l.CPU / 100)
	}
	if l.Memory > 0 {
		j.Flags |= jobLimitJobMemory
		j.JobMemory = uint64(l.Memory)
	}
	if l.Procs > 0 {
		j.Flags |= jobLimitActiveProcess
		j.ActiveProcesses = uint32(l.Procs)
	}
	return j
}
