package sandbox

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestJobLimits(t *testing.T) {
	for _, tc := range []struct {
		name string
		l    Limits
		full bool
		want jobLimits
	}{
		{"floor only kills the tree", Limits{CPU: time.Second, Memory: 1 << 20, Procs: 3}, false,
			jobLimits{Flags: jobLimitKillOnJobClose | jobLimitDieOnUnhandledException}},
		{"no caps", Limits{}, true, jobLimits{Flags: jobLimitKillOnJobClose | jobLimitDieOnUnhandledException}},
		{"all caps", Limits{CPU: 1500 * time.Millisecond, Memory: 256 << 20, Procs: 16}, true, jobLimits{
			Flags:         jobLimitKillOnJobClose | jobLimitDieOnUnhandledException | jobLimitJobTime | jobLimitJobMemory | jobLimitActiveProcess,
			UserTime100ns: 15_000_000, JobMemory: 256 << 20, ActiveProcesses: 16}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(buildJobLimits(tc.l, tc.full), tc.want); diff != "" {
				t.Errorf("job limits (-got +want):\n%s", diff)
			}
		})
	}
}
