package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ioh-lsp/ioh-lsp/internal/testenv"
)

// TestMain lets the test binary act as the sandbox's re-executed stages,
// as main does: `sandbox run` re-executes /proc/self/exe.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m, maybeSandboxInit)) }

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &cliEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: os.Getenv}
	code := dispatch(context.Background(), env, args)
	return code, out.String(), errb.String()
}

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{
		"": 0, "268435456": 268435456, "256MiB": 256 << 20, "1GiB": 1 << 30, "64KiB": 64 << 10,
		"10MB": 10_000_000, "512M": 512 << 20, "100B": 100, "2 GiB": 2 << 30,
	} {
		got, err := parseBytes(in)
		if err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"lots", "-5", "1.5GiB", "MiB", "99999999999999TiB"} {
		if _, err := parseBytes(in); err == nil {
			t.Errorf("parseBytes(%q) accepted", in)
		}
	}
}

func TestSandboxRunCLI(t *testing.T) {
	dir := t.TempDir()
	report := filepath.Join(dir, "report.json")
	for _, tc := range []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{"child exit code", []string{"sandbox", "run", "--write", dir, "--", "sh", "-c", "echo hi; exit 7"}, 7, "hi\n", ""},
		{"flags after --", []string{"sandbox", "run", "--", "sh", "-c", "echo $0", "-x"}, 0, "-x\n", ""},
		{"wall cap", []string{"sandbox", "run", "--timeout", "200ms", "--report", report, "--", "sleep", "30"}, 137, "", "wall cap hit"},
		{"missing command", []string{"sandbox", "run", "--"}, 2, "", "missing command"},
		{"bad memory", []string{"sandbox", "run", "--memory", "lots", "--", "true"}, 2, "", "--memory"},
		{"memory below the floor", []string{"sandbox", "run", "--memory", "1", "--", "true"}, 2, "", "memory cap of 1 bytes is below the 16 MiB"},
		{"memory at the floor", []string{"sandbox", "run", "--memory", "16MiB", "--", "sh", "-c", "echo ok"}, 0, "ok\n", ""},
		{"unknown flag", []string{"sandbox", "run", "--jail", "--", "true"}, 2, "", "jail"},
		{"unknown backend", []string{"sandbox", "run", "--backend", "jail", "--", "true"}, 2, "", "unknown backend"},
		{"unavailable backend", []string{"sandbox", "run", "--backend", "windows", "--", "true"}, 125, "", "unavailable"},
		{"unknown sub-command", []string{"sandbox", "jail"}, 2, "", "unknown sub-command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCLI(t, tc.args...)
			if code != tc.wantCode || out != tc.wantOut || !strings.Contains(errs, tc.wantErr) {
				t.Errorf("code %d stdout %q stderr %q; want %d %q containing %q", code, out, errs, tc.wantCode, tc.wantOut, tc.wantErr)
			}
		})
	}
	data, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"backend", "exit_code", "signal", "cap_hit", "mechanisms"} {
		if _, ok := got[k]; !ok {
			t.Errorf("report lacks %q: %s", k, data)
		}
	}
	if diff := cmp.Diff([]any{got["cap_hit"], got["exit_code"], got["signal"]}, []any{"wall", 137.0, "SIGKILL"}); diff != "" {
		t.Errorf("report (-got +want):\n%s", diff)
	}
}

func TestSandboxDoctorCLI(t *testing.T) {
	code, out, errs := runCLI(t, "sandbox", "doctor", "--json")
	var rep struct {
		Backend  string
		Reason   string
		Backends []struct {
			Name       string
			Works      bool
			Mechanisms []struct{ Name, State string }
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("doctor --json: %v\n%s%s", err, out, errs)
	}
	if code != 0 || rep.Backend == "" || rep.Reason == "" || len(rep.Backends) == 0 {
		t.Errorf("doctor: code %d report %+v", code, rep)
	}
	code, out, _ = runCLI(t, "sandbox", "doctor")
	if code != 0 || !strings.Contains(out, "a run gets the "+rep.Backend+" tier here") {
		t.Errorf("doctor text: code %d\n%s", code, out)
	}
	// Each caps line says which runs it is about, and the probes' own caps
	// (the rlimits of the mechanism lists) are labelled as such.
	for _, want := range []string{
		"caps of an agent's command or check that asks for none: ",
		"caps of `sandbox run` without flags: the same but output " + sandboxRunOutput + " (--output)",
		"each tier's mechanisms below are its probe's, which ran with its own caps: memory 512 MiB, 512 processes, 256 open files",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor text lacks %q:\n%s", want, out)
		}
	}
	// A test binary has no build stamp, so no init program of its own.
	if runtime.GOOS == "linux" && !strings.Contains(out, "stages run in: this binary re-executes itself for each stage: this binary was built without `make build`") {
		t.Errorf("doctor does not say what runs the stages:\n%s", out)
	}
	if code, _, _ := runCLI(t, "sandbox", "doctor", "extra"); code != 2 {
		t.Errorf("doctor with an argument: code %d, want 2", code)
	}
}

func TestSandboxBenchHelpers(t *testing.T) {
	code, out, errs := runCLI(t, "sandbox", "spawn-bench", "-n", "2", "--", "/bin/true")
	if f := strings.Fields(out); code != 0 || len(f) != 10 || f[0] != "sandbox" || f[2] != "cold" || f[4] != "oneshot" || f[6] != "bare" || f[8] != "reference" {
		t.Errorf("spawn-bench: code %d out %q err %q", code, out, errs)
	}
	dir := t.TempDir()
	for _, n := range []string{"a", "b", "c", "d"} {
		os.WriteFile(filepath.Join(dir, n), []byte(n), 0o644)
	}
	code, _, errs = runCLI(t, "sandbox", "stage-bench", "--changes", "3", dir)
	if code != 0 || !strings.Contains(errs, "staged 3 changes") {
		t.Errorf("stage-bench: code %d err %q", code, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a")); string(b) != "a" {
		t.Errorf("stage-bench changed the real tree: %q", b)
	}
}

// readReport reads a --report file's outcome.
func readReport(t *testing.T, path string) (code int, signal, capHit string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("report: %v", err)
	}
	var rep struct {
		ExitCode int    `json:"exit_code"`
		Signal   string `json:"signal"`
		CapHit   string `json:"cap_hit"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, data)
	}
	return rep.ExitCode, rep.Signal, rep.CapHit
}

// TestSandboxRunExitMatchesReport: the exit code of `sandbox run` is the
// one its --report file holds, whether a cap killed the command (137,
// SIGKILL) or only refused it something (the process cap makes fork fail;
// the command goes on and exits by itself).
func TestSandboxRunExitMatchesReport(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, tc := range []struct {
		name   string
		args   []string
		killed bool
	}{
		{"process cap refuses forks", []string{"--procs", "5", "--", "sh", "-c", "for i in 1 2 3 4 5 6 7 8; do sleep 0.3 & done; wait; exit 0"}, false},
		{"wall cap kills", []string{"--timeout", "300ms", "--", "sleep", "30"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			report := filepath.Join(dir, "r.json")
			code, _, errs := runCLI(t, append([]string{"sandbox", "run", "--report", report}, tc.args...)...)
			rcode, signal, capHit := readReport(t, report)
			if code != rcode {
				t.Errorf("exit %d, but the report says exit_code %d (signal %q, cap %q); stderr:\n%s", code, rcode, signal, capHit, errs)
			}
			if capHit == "" && !tc.killed {
				// Without a pids cgroup (an ordinary user) the process cap
				// is an rlimit, whose refusals leave no counter to read.
				t.Skipf("the process cap is not reported here (no pids cgroup): exit %d matches the report", code)
			}
			if capHit == "" {
				t.Fatalf("no cap hit in the report (exit %d); stderr:\n%s", rcode, errs)
			}
			if tc.killed != (signal != "") || tc.killed != (code == 137) {
				t.Errorf("killed %v: exit %d signal %q", tc.killed, code, signal)
			}
			if want := capHit + " cap hit"; !strings.Contains(errs, want) || tc.killed == strings.Contains(errs, "not killed") {
				t.Errorf("stderr does not say %q and whether it killed: %s", want, errs)
			}
		})
	}
}

// TestSandboxRunReportPath: a --report file that cannot be made is a usage
// error naming the path given, before the command runs.
func TestSandboxRunReportPath(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	bad := filepath.Join(dir, "missing", "r.json")
	code, _, errs := runCLI(t, "sandbox", "run", "--report", bad, "--", "touch", "ran")
	if code != 2 || !strings.Contains(errs, "--report "+bad+": no such file or directory") || strings.Contains(errs, ".report-") {
		t.Errorf("exit %d, want 2 naming %s; stderr:\n%s", code, bad, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Errorf("the command ran although its report could not be written")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".report-") {
			t.Errorf("temp report left behind: %s", e.Name())
		}
	}
	// The control: the same run with a report it can write.
	good := filepath.Join(dir, "r.json")
	if code, _, errs := runCLI(t, "sandbox", "run", "--report", good, "--", "touch", "ran"); code != 0 {
		t.Errorf("control: exit %d: %s", code, errs)
	}
	if _, err := os.Stat(good); err != nil {
		t.Errorf("control: %v", err)
	}
}
