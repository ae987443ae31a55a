package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/ioh-lsp/ioh-lsp/internal/eval/result"
	"github.com/ioh-lsp/ioh-lsp/internal/eval/runner"
)

const evalSuite = "../../examples/eval/suite.yaml"

// stableCells reads a results file, sorted, without the fields that
// differ between two runs of the same replayed cell (its run id, trace
// file and wall time).
func stableCells(t *testing.T, path string) string {
	t.Helper()
	cells, _, err := result.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	result.Sort(cells)
	for i := range cells {
		cells[i].RunID, cells[i].Trace, cells[i].WallMS = "", "", 0
	}
	var b bytes.Buffer
	result.WriteAll(&b, cells)
	return b.String()
}

// TestEvalShardsMergeToTheUnshardedRun runs the example suite once whole
// and once as three shards in three processes at once (the index from
// JOB_COMPLETION_INDEX for one of them, as a Kubernetes Indexed Job sets
// it), merges the shards and compares: the same cells, and the same
// report byte for byte.
func TestEvalShardsMergeToTheUnshardedRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs the example suite four times")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	run := func(env []string, args ...string) ([]byte, error) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), env...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Errorf("ioh-lsp %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return out, err
	}
	whole := filepath.Join(dir, "whole")
	var wg sync.WaitGroup
	wg.Add(4)
	go func() {
		defer wg.Done()
		run(nil, "eval", evalSuite, "--repeat", "2", "--parallel", "2", "--no-timing", "--out", whole)
	}()
	for i, shard := range []string{"0/3", "1/3", "3"} {
		env := []string(nil)
		if shard == "3" {
			env = []string{"JOB_COMPLETION_INDEX=2"}
		}
		go func() {
			defer wg.Done()
			run(env, "eval", evalSuite, "--repeat", "2", "--shard", shard, "--out", filepath.Join(dir, "shard", string(rune('0'+i))))
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	shards, _ := filepath.Glob(filepath.Join(dir, "shard", "*", result.FileName))
	var sizes []int
	for _, s := range shards {
		cells, _, _ := result.Read(s)
		sizes = append(sizes, len(cells))
	}
	if len(shards) != 3 || sizes[0]+sizes[1]+sizes[2] != 12 || sizes[0] != 4 || sizes[2] != 4 {
		t.Fatalf("shards %v hold %v cells, want 4 each", shards, sizes)
	}
	merged := filepath.Join(dir, "merged")
	md, err := run(nil, append([]string{"eval", "merge", "--no-timing", "--title", "Evaluation of example", "--out", merged}, shards...)...)
	if err != nil {
		t.FailNow()
	}
	if a, b := stableCells(t, filepath.Join(whole, result.FileName)), stableCells(t, filepath.Join(merged, result.FileName)); a != b {
		t.Fatalf("merged cells differ from the unsharded run's:\n%s\nvs\n%s", b, a)
	}
	want, _ := os.ReadFile(filepath.Join(whole, "report.md"))
	got, _ := os.ReadFile(filepath.Join(merged, "report.md"))
	if !bytes.Equal(got, want) || !bytes.Equal(md, want) {
		t.Fatalf("merged report differs:\n%s\nunsharded:\n%s", got, want)
	}
	for _, f := range []string{"report.html"} {
		a, _ := os.ReadFile(filepath.Join(whole, f))
		b, _ := os.ReadFile(filepath.Join(merged, f))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between the merged and the unsharded run", f)
		}
	}
	if !strings.Contains(string(want), "| fix | 6 | 6 | 100.0% |") || !strings.Contains(string(want), "| giveup | 6 | 0 | 0.0% |") {
		t.Errorf("unexpected report:\n%s", want)
	}
}

// TestEvalUsageErrors: bad flags and suites are usage errors naming the
// flag, file or variant.
func TestEvalUsageErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("tasks:\n  - workspace: nowhere\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"eval"}, "ioh-lsp eval: "},
		{[]string{"eval", evalSuite, "--repeat", "0"}, "--repeat and --parallel must be at least 1"},
		{[]string{"eval", evalSuite, "--shard", "5/2"}, "want 0 to 1"},
		{[]string{"eval", evalSuite, "--variant", "nope"}, `no variant "nope"`},
		{[]string{"eval", bad}, bad + ":2:16: workspace"},
		{[]string{"eval", "merge"}, "ioh-lsp eval merge: "},
		{[]string{"eval", "merge", "/no/such/results.jsonl"}, "no such file"},
	} {
		var stderr bytes.Buffer
		env := &cliEnv{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &stderr, getenv: os.Getenv}
		if code := dispatch(t.Context(), env, c.args); code != exitUsage || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %d and %q", c.args, code, stderr.String(), exitUsage, c.want)
		}
	}
}

// TestEvalDeployExamples: the shipped Kubernetes Indexed Job and CI
// matrix run as many shards as they declare, with flags eval accepts.
func TestEvalDeployExamples(t *testing.T) {
	var job struct {
		Spec struct {
			CompletionMode string `yaml:"completionMode"`
			Completions    int    `yaml:"completions"`
			Template       struct {
				Spec struct {
					Containers []struct {
						Args []string `yaml:"args"`
					} `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	readYAML(t, "../../deploy/k8s-indexed-job.yaml", &job)
	if job.Spec.CompletionMode != "Indexed" || len(job.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("job %+v", job.Spec)
	}
	args := strings.Fields(strings.Join(job.Spec.Template.Spec.Containers[0].Args, " "))
	if got := flagValue(args, "--shard"); got != fmt.Sprint(job.Spec.Completions) {
		t.Errorf("the job runs --shard %s with %d completions", got, job.Spec.Completions)
	}
	sh, err := runner.ParseShard(flagValue(args, "--shard"), func(string) string { return "3" })
	if err != nil || sh != (runner.Shard{Index: 3, Count: 4}) {
		t.Errorf("shard of pod 3: %v, %v", sh, err)
	}
	var ci struct {
		Jobs struct {
			Shard struct {
				Strategy struct {
					Matrix struct {
						Shard []int `yaml:"shard"`
					} `yaml:"matrix"`
				} `yaml:"strategy"`
				Steps []struct {
					Run string `yaml:"run"`
				} `yaml:"steps"`
			} `yaml:"shard"`
		} `yaml:"jobs"`
	}
	readYAML(t, "../../deploy/ci-matrix.yml", &ci)
	n := len(ci.Jobs.Shard.Strategy.Matrix.Shard)
	found := false
	for _, s := range ci.Jobs.Shard.Steps {
		if strings.Contains(s.Run, "ioh-lsp eval ") {
			found = true
			if want := fmt.Sprintf("--shard ${{ matrix.shard }}/%d", n); !strings.Contains(s.Run, want) {
				t.Errorf("the CI step %q lacks %q", s.Run, want)
			}
		}
	}
	if !found || n == 0 {
		t.Errorf("no eval step or matrix in the CI example")
	}
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func flagValue(args []string, name string) string {
	for i, a := range args {
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// TestEvalBashCompletion: eval completes its sub-commands and, without
// one, its own flags.
func TestEvalBashCompletion(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	var script strings.Builder
	bashCompletion(&script, specs())
	for words, want := range map[string]string{
		"ioh-lsp eval m":             "merge",
		"ioh-lsp eval --sh":          "--shard",
		"ioh-lsp eval generate --se": "--seed",
		"ioh-lsp eval merge --no-":   "--no-timing",
	} {
		probe := script.String() + "\nCOMP_WORDS=(" + words + ")\nCOMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))\n_ioh_lsp\necho \"${COMPREPLY[*]}\"\n"
		got, err := exec.Command("bash", "-c", probe).CombinedOutput()
		if err != nil || strings.TrimSpace(string(got)) != want {
			t.Errorf("bash completion of %q = %q (%v), want %s", words, got, err, want)
		}
	}
}
