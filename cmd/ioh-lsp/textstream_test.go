package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
)

// streamingModel is an OpenAI-compatible server speaking the chat
// completions SSE stream: its first answer streams text in pieces, and
// before each piece after the first it waits for gate (or pause when
// gate is nil); then a finish call. With dropFirst, the first request
// breaks off after its first piece, so the run retries.
type streamingModel struct {
	pieces    []string
	pause     time.Duration
	gate      chan struct{}
	dropFirst bool

	mu       sync.Mutex
	calls    int
	timedOut bool // the gate did not open
}

func (m *streamingModel) serve(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		m.mu.Lock()
		m.calls++
		n := m.calls
		m.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		h := `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"local-llm",`
		send := func(delta, finish string) {
			fin := "null"
			if finish != "" {
				fin = `"` + finish + `"`
			}
			fmt.Fprintf(w, "data: %s\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}]}\n\n", h, delta, fin)
			w.(http.Flusher).Flush()
		}
		first := n == 1 || (m.dropFirst && n == 2)
		if first {
			send(`{"role":"assistant","content":""}`, "")
			for i, p := range m.pieces {
				if i > 0 {
					if m.dropFirst && n == 1 {
						panic(http.ErrAbortHandler) // the connection breaks mid-stream
					}
					if m.gate != nil {
						select {
						case <-m.gate:
						case <-time.After(15 * time.Second):
							m.mu.Lock()
							m.timedOut = true
							m.mu.Unlock()
						}
					} else {
						time.Sleep(m.pause)
					}
				}
				b, _ := json.Marshal(map[string]string{"content": p})
				send(string(b), "")
			}
			send(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"task.ioh.yaml\"}"}}]}`, "")
		} else {
			send(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_2","type":"function","function":{"name":"finish","arguments":"{\"summary\":\"done\"}"}}]}`, "")
		}
		send(`{}`, "tool_calls")
		fmt.Fprintf(w, "data: %s\"choices\":[],\"usage\":{\"prompt_tokens\":30,\"completion_tokens\":5,\"total_tokens\":35}}\n\n", h)
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

func streamingWorkspace(t *testing.T, m *streamingModel, extraEnv ...string) (dir string, env []string) {
	srv := m.serve(t)
	user := fmt.Sprintf("model:\n  provider: openai-compatible\n  base_url: %s/v1\n  name: local-llm\nprices:\n  local-llm: {input: 0, output: 0}\n", srv.URL)
	return firstHourWorkspace(t, user, "version: 1\ngoal: read the task file\n", extraEnv...)
}

// TestStreamedTextBinary: the model's text is printed as it arrives,
// behind its step's prefix, before the stream ends (the server holds
// the second piece until the first is on stderr); the turn's headline is
// not printed again; --json prints the text_delta events, and the stored
// trace has none; a retried attempt's printed text is said to be
// discarded.
func TestStreamedTextBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	t.Run("pipe", func(t *testing.T) {
		m := &streamingModel{pieces: []string{"I will read ", "the task file."}, gate: make(chan struct{})}
		dir, env := streamingWorkspace(t, m)
		cmd := exec.Command(bin, "run", "task.ioh.yaml", "--approve", "never")
		cmd.Dir, cmd.Env = dir, env
		pr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var all strings.Builder
		seen := false
		rd := bufio.NewReader(pr)
		buf := make([]byte, 1024)
		for {
			n, err := rd.Read(buf)
			all.Write(buf[:n])
			if !seen && strings.Contains(all.String(), "step 1: I will read ") {
				seen = true
				close(m.gate) // the first piece is on stderr: the stream may go on
			}
			if err != nil {
				break
			}
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("%v\n%s", err, all.String())
		}
		out := all.String()
		if !seen || m.timedOut {
			t.Fatalf("the first piece was not printed while the stream was held:\n%s", out)
		}
		if !strings.Contains(out, "step 1: I will read the task file.\n") {
			t.Errorf("the streamed turn is not one line behind its prefix:\n%s", out)
		}
		if n := strings.Count(out, "I will read"); n != 1 {
			t.Errorf("the text is printed %d times, want once (no headline after streaming):\n%s", n, out)
		}
	})
	t.Run("json", func(t *testing.T) {
		m := &streamingModel{pieces: []string{"I will read ", "the task file."}}
		dir, env := streamingWorkspace(t, m)
		cmd := exec.Command(bin, "run", "task.ioh.yaml", "--approve", "never", "--json")
		cmd.Dir, cmd.Env = dir, env
		var errb strings.Builder
		cmd.Stderr = &errb
		stdout, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v\n%s", err, errb.String())
		}
		var deltas []string
		var run string
		for _, l := range strings.Split(strings.TrimSpace(string(stdout)), "\n") {
			var e event.Event
			if err := json.Unmarshal([]byte(l), &e); err != nil {
				t.Fatalf("not JSON: %q", l)
			}
			if p, ok := e.Payload.(*event.TextDelta); ok {
				deltas, run = append(deltas, p.Text), e.Run
				if e.Step != 1 || p.Attempt != 1 {
					t.Errorf("text_delta %s: want step 1, attempt 1", l)
				}
			}
		}
		if strings.Join(deltas, "|") != "I will read |the task file." {
			t.Errorf("text_delta events %q, want the two pieces", deltas)
		}
		tcmd := exec.Command(bin, "trace", run, "--json")
		tcmd.Dir, tcmd.Env = dir, env
		tout, err := tcmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(tout), `"text_delta"`) || !strings.Contains(string(tout), `"model_turn"`) {
			t.Errorf("trace --json of the stored run holds a text_delta (or no model_turn):\n%s", tout)
		}
	})
	t.Run("retry", func(t *testing.T) {
		m := &streamingModel{pieces: []string{"I will read ", "the task file."}, dropFirst: true}
		dir, env := streamingWorkspace(t, m)
		code, out := runIn(t, bin, dir, env, "run", "task.ioh.yaml", "--approve", "never")
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, out)
		}
		if !strings.Contains(out, "step 1: I will read \nretry: retrying in") || !strings.Contains(out, discardedNote+"\n") {
			t.Errorf("the retry after streamed text does not say it is discarded:\n%s", out)
		}
		if !strings.Contains(out, "step 1: I will read the task file.\n") {
			t.Errorf("the retried attempt's text is not streamed anew:\n%s", out)
		}
	})
}

// Streamed text of a sub-agent gets its prefix, text of another run
// coming between starts a new line behind that run's prefix, a line the
// text starts is indented under the first, and any other line ends the
// text's line first.
func TestTurnTextLines(t *testing.T) {
	var b strings.Builder
	st := newStatusLine(&b, false, false, func(s string) string { return s })
	defer st.stop()
	sw := st.writer(&b)
	sink := &cliSink{stderr: &lockedWriter{w: sw}, status: st, text: turnText{out: &sw}}
	delta := func(run, parent, text string) event.Event {
		return event.New(run, parent, 1, &event.TextDelta{Text: text, Attempt: 1})
	}
	for _, e := range []event.Event{
		delta("r-root", "", "Hello "),
		delta("r-kid", "r-root", "child says"),
		delta("r-root", "", "world,\nand more"),
		event.New("r-root", "", 1, &event.ModelTurn{Text: "Hello world,\nand more", ToolCalls: 1}),
		delta("r-kid", "r-root", " hi"),
		event.New("r-kid", "r-root", 1, &event.ToolCall{Tool: "read_file", Arguments: "{}"}),
	} {
		sink.Emit(e)
	}
	want := "step 1: Hello \n" +
		"  [r-kid] step 1: child says\n" +
		"step 1: world,\n" +
		"        and more\n" +
		"  [r-kid] step 1:  hi\n" +
		"  [r-kid] step 1: read_file {}\n"
	if got := b.String(); got != want {
		t.Errorf("lines:\n%s\nwant:\n%s", got, want)
	}
}
