package sandbox

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/stagecfg"
)

// stageStart is the handshake every Linux tier's first stage (PID 1, the
// landlock runner) begins with: fd 3 carries its config from the caller
// (a frame, package internal/stagecfg), then the caller's "go", which
// stagecfg.AwaitGo waits for; fd 4 takes its status lines back. report
// writes one status line; fail reports an error and returns the
// setup-failure exit code. The stage is made non-dumpable once the config
// is read.
func stageStart() (cfg initConfig, stF *os.File, report func(initStatus), fail func(error) int, err error) {
	stF = os.NewFile(4, "status")
	unix.CloseOnExec(3)
	unix.CloseOnExec(4)
	// The first report that carries mechanisms also names the program
	// the stages run in (the small init program or this whole binary).
	program := initProgramMechanism()
	named := false
	report = func(st initStatus) {
		if !named && len(st.Mechanisms) > 0 {
			st.Mechanisms = append([]Mechanism{program}, st.Mechanisms...)
			named = true
		}
		b := appendStatusLine(make([]byte, 0, 2048), st) // stageconfig.go
		if !st.Done {
			_, _ = stF.Write(b)
			return
		}
		// The last word: nothing of the run is left (each stage kills and
		// reaps the rest before it reports the end), so the caller gets
		// EOF on the output and status now, not after this process and
		// its namespaces are torn down (~1 ms). The output first, then
		// the line and the status's EOF back to back: the caller, woken
		// by the line, mostly finds the EOF with it.
		os.Stdin.Close()
		os.Stdout.Close()
		os.Stderr.Close()
		_, _ = stF.Write(b)
		stF.Close()
	}
	fail = func(err error) int {
		report(initStatus{Error: err.Error()})
		return 125
	}
	stagecfg.Reset()
	body, rest, err := stagecfg.Read(3)
	if err == nil {
		cfg, err = stagecfg.Decode(body)
	}
	if err != nil {
		_ = unix.Close(3)
		return cfg, stF, report, fail, fmt.Errorf("read config: %w", err)
	}
	if err := stagecfg.ExpectGo(3, rest, cfg.CgroupTasks); err != nil {
		return cfg, stF, report, fail, err
	}
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	return cfg, stF, report, fail, nil
}
