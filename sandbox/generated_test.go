package sandbox

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestMacProfile(t *testing.T) {
	p := buildMacProfile([]string{"/Users/me/proj", `/odd "path")`}, []string{"/Users/me/.ssh"}, "/private/tmp/run1", false)
	for _, want := range []string{
		"(version 1)", "(deny file-write*)", `(subpath (param "WRITABLE_0"))`, `(subpath (param "WRITABLE_2"))`,
		"(deny file-read* file-write*\n    (subpath (param \"MASKED_0\"))", "(deny network*)", "(allow signal (target same-sandbox))",
	} {
		if !strings.Contains(p.Text, want) {
			t.Errorf("profile lacks %q:\n%s", want, p.Text)
		}
	}
	if strings.Contains(p.Text, "/Users") || strings.Contains(p.Text, "odd") {
		t.Errorf("paths must travel as parameters, not in the profile text:\n%s", p.Text)
	}
	wantArgs := []string{"-p", p.Text, "-D", "MASKED_0=/Users/me/.ssh", "-D", "WRITABLE_0=/private/tmp/run1",
		"-D", "WRITABLE_1=/Users/me/proj", "-D", `WRITABLE_2=/odd "path")`}
	if diff := cmp.Diff(p.args(), wantArgs); diff != "" {
		t.Errorf("args (-got +want):\n%s", diff)
	}
	if net := buildMacProfile(nil, nil, "/t", true); strings.Contains(net.Text, "network") {
		t.Errorf("network requested but denied:\n%s", net.Text)
	}
}

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
