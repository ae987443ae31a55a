package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeLocalModel is an OpenAI-compatible server (Ollama, llama.cpp, vLLM)
// whose model has no price: every request is answered with a finish call.
func fakeLocalModel(t *testing.T) (*httptest.Server, *atomic.Int32) {
	return fakeLocalModelHanging(t, 0)
}

// fakeLocalModelHanging is fakeLocalModel whose first hang requests
// send one piece of the stream and then nothing until the test ends.
func fakeLocalModelHanging(t *testing.T, hang int32) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		h := `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"local-llm",`
		if i <= hang {
			fmt.Fprintf(w, "data: %s\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"thinking\"},\"finish_reason\":null}]}\n\n", h)
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-stop:
			}
			return
		}
		fmt.Fprintf(w, "data: %s\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"finish\",\"arguments\":\"{\\\"summary\\\":\\\"done\\\"}\"}}]},\"finish_reason\":null}]}\n\n", h)
		fmt.Fprintf(w, "data: %s\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n", h)
		fmt.Fprintf(w, "data: %s\"choices\":[],\"usage\":{\"prompt_tokens\":30,\"completion_tokens\":5,\"total_tokens\":35}}\n\n", h)
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(stop) })
	return srv, &n
}

// firstHourWorkspace is a fresh `git init` project with a user config
// (userConfig, "" for none) in its own XDG_CONFIG_HOME, and its task file.
func firstHourWorkspace(t *testing.T, userConfig, task string, extraEnv ...string) (dir string, env []string) {
	t.Helper()
	dir = t.TempDir()
	home := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "task.ioh.yaml"), []byte(task), 0o644); err != nil {
		t.Fatal(err)
	}
	if userConfig != "" {
		if err := os.MkdirAll(filepath.Join(home, ".config", "ioh"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, ".config", "ioh", "config.yaml"), []byte(userConfig), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "IOH_STATE_DIR=" + t.TempDir()}
	return dir, append(env, extraEnv...)
}

func runIn(t *testing.T, bin, dir string, env []string, args ...string) (code int, stderr string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, env
	var errb strings.Builder
	cmd.Stderr = &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), errb.String()
	} else if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return 0, errb.String()
}

// TestFirstHourBinary runs the built binary as a new user would.
func TestFirstHourBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	t.Run("unpriced local model under the default dollar limit", func(t *testing.T) { testUnpricedDefault(t, bin) })
	t.Run("missing API key", func(t *testing.T) { testMissingKey(t, bin) })
	t.Run("hung provider", func(t *testing.T) { testHungProvider(t, bin) })
	t.Run("README example in a fresh project", func(t *testing.T) { testReadmeExample(t, bin) })
	t.Run("reader of the output goes away", func(t *testing.T) { testEPIPE(t, bin) })
}

// testUnpricedDefault: a local model (no price) under the dollar limit
// nobody wrote runs, saying once that no dollar limit applies; the same
// model under a dollar limit the task file wrote is refused (exit 2)
// before any request, as before.
func testUnpricedDefault(t *testing.T, bin string) {
	srv, n := fakeLocalModel(t)
	user := fmt.Sprintf("model:\n  provider: openai-compatible\n  base_url: %s/v1\n  name: local-llm\n", srv.URL)
	dir, env := firstHourWorkspace(t, user, "version: 1\ngoal: say done\n")
	code, stderr := runIn(t, bin, dir, env, "run", "task.ioh.yaml", "--approve", "never")
	if code != 0 || n.Load() == 0 {
		t.Fatalf("default limit: exit %d after %d requests, want 0 after one\n%s", code, n.Load(), stderr)
	}
	if !strings.Contains(stderr, "after 1 step, 35 tokens") {
		t.Errorf("the summary should say \"after 1 step, 35 tokens\":\n%s", stderr)
	}
	if c := strings.Count(stderr, "no dollar limit applies"); c != 1 {
		t.Errorf("the run should say once that no dollar limit applies (%d times):\n%s", c, stderr)
	}
	n.Store(0)
	dir, env = firstHourWorkspace(t, user, "version: 1\ngoal: say done\nbudget:\n  cost_usd: 1\n")
	code, stderr = runIn(t, bin, dir, env, "run", "task.ioh.yaml", "--approve", "never")
	if code != 2 || n.Load() != 0 || !strings.Contains(stderr, "has no price") {
		t.Errorf("a written dollar limit: exit %d after %d requests, want 2 before any, naming the missing price\n%s", code, n.Load(), stderr)
	}
}

// testMissingKey: a provider whose key variable is not set is a
// configuration error before the run (exit 2, no run row) naming the
// variable; control: with the key set, the same run starts (and fails at
// the provider, which is no server here: exit 5 with a run row).
func testMissingKey(t *testing.T, bin string) {
	user := "model:\n  provider: openai-compatible\n  base_url: http://127.0.0.1:1/v1\n  name: m\n  api_key_env: LOCAL_API_KEY\n"
	dir, env := firstHourWorkspace(t, user, "version: 1\ngoal: say done\nretry: {max: 0}\n")
	code, stderr := runIn(t, bin, dir, env, "run", "task.ioh.yaml", "--approve", "never")
	if code != 2 || !strings.Contains(stderr, "LOCAL_API_KEY") || strings.Contains(stderr, "run r-") {
		t.Errorf("missing key: exit %d, want 2 naming LOCAL_API_KEY before any run\n%s", code, stderr)
	}
	code, stderr = runIn(t, bin, dir, append(env, "LOCAL_API_KEY=k"), "run", "task.ioh.yaml", "--approve", "never")
	if code != exitProvider || !strings.Contains(stderr, "run r-") {
		t.Errorf("control, key set: exit %d, want %d from a started run\n%s", code, exitProvider, stderr)
	}
}

// TestVersionWithoutVCS: a binary built without VCS stamping (as this
// test binary is) says so and how to get it, not "commit unknown".
func TestVersionWithoutVCS(t *testing.T) {
	var out strings.Builder
	if code := cmdVersion(context.Background(), &cliEnv{stdout: &out, stderr: &out}, nil); code != 0 {
		t.Fatalf("version: exit %d: %s", code, out.String())
	}
	if !strings.Contains(out.String(), "commit not recorded: built without VCS stamping (-buildvcs=false") || strings.Contains(out.String(), "unknown") {
		t.Errorf("version output:\n%s", out.String())
	}
}

// testHungProvider: a provider that goes silent mid-stream is noticed
// within model.idle_timeout (the user config's), retried, and the run
// ends verified; the retry line names the key. The same key in the
// untrusted workspace's config is ignored with a warning naming it.
func testHungProvider(t *testing.T, bin string) {
	srv, n := fakeLocalModelHanging(t, 1)
	user := fmt.Sprintf("model:\n  provider: openai-compatible\n  base_url: %s/v1\n  name: local-llm\n  idle_timeout: 500ms\nprices:\n  local-llm: {input: 0, output: 0}\n", srv.URL)
	dir, env := firstHourWorkspace(t, user, "version: 1\ngoal: say done\n")
	if err := os.MkdirAll(filepath.Join(dir, ".ioh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".ioh", "config.yaml"), []byte("model:\n  idle_timeout: 1h\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	code, stderr := runIn(t, bin, dir, env, "run", "task.ioh.yaml", "--approve", "never")
	took := time.Since(start)
	if code != 0 || n.Load() != 2 {
		t.Fatalf("exit %d after %d requests, want 0 after a hung one and its retry\n%s", code, n.Load(), stderr)
	}
	if !strings.Contains(stderr, "model.idle_timeout") || !strings.Contains(stderr, "sent nothing for 500ms") {
		t.Errorf("the retry should name the stall and model.idle_timeout:\n%s", stderr)
	}
	if !regexp.MustCompile(`retry: retrying in \d+(ms| ms|\.\d s) \(attempt 2, timeout\)`).MatchString(stderr) {
		t.Errorf("the retry line should say how long it waits and which attempt comes next:\n%s", stderr)
	}
	if !strings.Contains(stderr, "model.idle_timeout ignored") {
		t.Errorf("the untrusted workspace's idle_timeout should be ignored with a warning:\n%s", stderr)
	}
	t.Logf("a provider hung mid-stream: noticed, retried and the run ended in %v (idle bound 500ms)", took)
}

// testReadmeExample: the README's task (with the model line it used to
// carry) in a fresh `git init` project, no user config, ANTHROPIC_API_KEY
// set: the ignored model.provider names the user config and `trusted:`,
// the key picks its provider and the run says so, and the run starts
// (its one request goes to a proxy that refuses it: no live model is
// called; exit 5). Without any key the error names the user config and
// the variables (exit 2).
func testReadmeExample(t *testing.T, bin string) {
	task := "version: 1\ngoal: \"Make ParseDuration accept a 'd' suffix for days\"\nretry: {max: 0}\nmodel: { provider: anthropic, name: claude-sonnet-4-6 }\n"
	dir, env := firstHourWorkspace(t, "", task, "ANTHROPIC_API_KEY=sk-ant-test", "HTTPS_PROXY=http://127.0.0.1:1", "NO_PROXY=")
	code, stderr := runIn(t, bin, dir, env, "run", "task.ioh.yaml", "--approve", "never")
	for _, want := range []string{"model.provider ignored", "trusted:", "config.yaml", "using anthropic (claude-sonnet-4-6) because ANTHROPIC_API_KEY is set", "run r-"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if code != exitProvider {
		t.Errorf("exit %d, want %d (the refused request)\n%s", code, exitProvider, stderr)
	}
	dir, env = firstHourWorkspace(t, "", task)
	code, stderr = runIn(t, bin, dir, env, "run", "task.ioh.yaml", "--approve", "never")
	if code != exitUsage || !strings.Contains(stderr, "~/.config/ioh/config.yaml") || !strings.Contains(stderr, "ANTHROPIC_API_KEY") {
		t.Errorf("no key: exit %d, want 2 naming the user config and the variables\n%s", code, stderr)
	}
}

// TestDidYouMean: a mistyped command or flag gets the near one named.
func TestDidYouMean(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"rnu"}, `did you mean "run"?`},
		{[]string{"run", "t.ioh.yaml", "--aprove", "never"}, "did you mean --approve?"},
		{[]string{"trace", "--jsno"}, "did you mean --json?"},
		{[]string{"runs", "--zzzzzz"}, "ioh-lsp runs --help lists the flags"},
	} {
		var out, errb strings.Builder
		code := dispatch(t.Context(), &cliEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}, tt.args)
		if code != exitUsage || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, code, errb.String(), tt.want)
		}
	}
}

// testEPIPE: `ioh-lsp run --json | head -1`: the reader leaves after the
// first line; the run goes on to its end (verified and left pending,
// exit 0, recorded),
// not killed by SIGPIPE and left interrupted.
func testEPIPE(t *testing.T, bin string) {
	dir, env := newCrashWorkspace(t)
	cmd := exec.Command(bin, "run", "task.ioh.yaml", "--approve", "never", "--json")
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb strings.Builder
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	for b[0] != '\n' {
		if _, err := out.Read(b); err != nil {
			t.Fatalf("no first line: %v", err)
		}
	}
	out.Close() // the reader is gone: the next write gets EPIPE
	err = cmd.Wait()
	if err != nil {
		t.Fatalf("run with its reader gone: %v (want exit 0)\n%s", err, errb.String())
	}
	runs := exec.Command(bin, "runs", "--json")
	runs.Dir, runs.Env = dir, env
	list, _ := runs.Output()
	// Verified and left pending (--approve never): awaiting approval.
	if !strings.Contains(string(list), `"outcome": "awaiting_approval"`) {
		t.Errorf("the run did not reach its end (verified, pending): %s", list)
	}
}
