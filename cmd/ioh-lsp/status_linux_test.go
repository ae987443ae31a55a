package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeSlowModel is an OpenAI-compatible server whose model thinks for
// delay before it answers each request with a finish call.
func fakeSlowModel(t *testing.T, delay time.Duration) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		h := `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"local-llm",`
		fmt.Fprintf(w, "data: %s\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"finish\",\"arguments\":\"{\\\"summary\\\":\\\"done\\\"}\"}}]},\"finish_reason\":null}]}\n\n", h)
		fmt.Fprintf(w, "data: %s\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n", h)
		fmt.Fprintf(w, "data: %s\"choices\":[],\"usage\":{\"prompt_tokens\":30,\"completion_tokens\":5,\"total_tokens\":35}}\n\n", h)
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// slowModelWorkspace is a fresh project whose user config points at a
// model that thinks for delay.
func slowModelWorkspace(t *testing.T, delay time.Duration, extraEnv ...string) (dir string, env []string) {
	srv := fakeSlowModel(t, delay)
	user := fmt.Sprintf("model:\n  provider: openai-compatible\n  base_url: %s/v1\n  name: local-llm\nprices:\n  local-llm: {input: 0, output: 0}\n", srv.URL)
	return firstHourWorkspace(t, user, "version: 1\ngoal: say done\n", extraEnv...)
}

// runOnTerminal runs the binary with stderr on a pseudo-terminal and
// returns its exit code and what the terminal showed.
func runOnTerminal(t *testing.T, bin, dir string, env []string, args ...string) (int, string) {
	t.Helper()
	ptmx, tty := openPty(t)
	var mu sync.Mutex
	var shown strings.Builder
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := ptmx.Read(b)
			mu.Lock()
			shown.Write(b[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env, cmd.Stderr = dir, env, tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	code := waitCode(t, cmd, done)
	time.Sleep(200 * time.Millisecond) // the terminal hands on the last bytes
	mu.Lock()
	defer mu.Unlock()
	return code, shown.String()
}

// TestStatusLineBinary: while the model thinks, a terminal shows the step,
// what the run waits for and the elapsed time, redrawn in place (and
// dimmed unless NO_COLOR); without a terminal, or on TERM=dumb, a wait
// past 5 s is said once as a plain line, and --json's stdout carries
// only JSON.
func TestStatusLineBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	t.Run("terminal", func(t *testing.T) {
		for _, noColor := range []bool{false, true} {
			extra := []string{"TERM=xterm-256color"}
			if noColor {
				extra = append(extra, "NO_COLOR=1")
			}
			dir, env := slowModelWorkspace(t, 2500*time.Millisecond, extra...)
			code, shown := runOnTerminal(t, bin, dir, env, "run", "task.ioh.yaml", "--approve", "never")
			if code != 0 {
				t.Fatalf("exit %d, want 0\n%q", code, shown)
			}
			if !strings.Contains(shown, "\r\x1b[K") || !strings.Contains(shown, "step 1: waiting for the model · 1s") {
				t.Errorf("NO_COLOR=%v: no status line redrawn in place with the step, the wait and its time:\n%q", noColor, shown)
			}
			if dim := strings.Contains(shown, "\x1b[2m"); dim == noColor {
				t.Errorf("NO_COLOR=%v: the line dimmed is %v:\n%q", noColor, dim, shown)
			}
			if strings.Contains(shown, `\x1b`) {
				t.Errorf("the line's escapes were neutralised by the output guard:\n%q", shown)
			}
		}
	})
	t.Run("dumb terminal", func(t *testing.T) {
		dir, env := slowModelWorkspace(t, plainAfter+1500*time.Millisecond, "TERM=dumb")
		code, shown := runOnTerminal(t, bin, dir, env, "run", "task.ioh.yaml", "--approve", "never")
		if code != 0 {
			t.Fatalf("exit %d, want 0\n%q", code, shown)
		}
		if strings.Contains(shown, "\x1b[K") || strings.Count(shown, "waiting for the model (step 1)…") != 1 {
			t.Errorf("TERM=dumb: want one plain line for the wait and no escapes:\n%q", shown)
		}
	})
	t.Run("pipe with --json", func(t *testing.T) {
		dir, env := slowModelWorkspace(t, plainAfter+1500*time.Millisecond, "TERM=xterm")
		cmd := exec.Command(bin, "run", "task.ioh.yaml", "--approve", "never", "--json")
		cmd.Dir, cmd.Env = dir, env
		var errb strings.Builder
		cmd.Stderr = &errb
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v\n%s", err, errb.String())
		}
		stderr := errb.String()
		if strings.Contains(stderr, "\x1b") || strings.Count(stderr, "waiting for the model (step 1)…\n") != 1 {
			t.Errorf("over a pipe: want the wait said once as a plain line:\n%q", stderr)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if !strings.HasPrefix(l, "{") {
				t.Errorf("stdout under --json holds a line that is not JSON: %q", l)
			}
		}
	})
}
