package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/approve"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/render"
)

// The status line of `ioh-lsp run` and `resume` (docs/cli.md#progress):
// nothing moves silently. On a terminal (not TERM=dumb) one line at the
// bottom of stderr says the step, what the run waits for and for how
// long, redrawn in place every second; every other line written to
// stderr first clears it. Elsewhere (a pipe, a file, a dumb terminal) a
// wait is announced once, as a plain line, after plainAfter.

const plainAfter = 5 * time.Second

// statusLine follows a run's events to know what it waits for. Safe for
// concurrent use.
type statusLine struct {
	mu      sync.Mutex
	out     io.Writer // stderr itself, not through the guard: the line's own escapes must pass
	live    bool      // redraw in place
	color   bool      // dim the line (NO_COLOR unset)
	clean   func(string) string
	step    int
	what    string // "" when nothing is waited for
	since   time.Time
	shown   bool // live: the line is on screen; plain: this wait was announced
	paused  bool // a prompt is on screen
	pending int  // tool calls of the step without their result
	checks  int  // check runs seen since the finish call
	done    chan struct{}
	stopped bool
	text    textLine // the line a turn's streamed text is on
}

// textLine is the line streamed model text is written on: open from a
// turn's first piece until its turn ends or another line is written (the
// status line stays off meanwhile), key the run whose text it is.
type textLine struct {
	open bool
	key  string
	bol  bool // the last piece ended a line
}

// newStatusLine starts the status line on out; live says out is a
// terminal that can redraw a line. clean makes a text safe to print.
func newStatusLine(out io.Writer, live, color bool, clean func(string) string) *statusLine {
	s := &statusLine{out: out, live: live, color: color, clean: clean, done: make(chan struct{})}
	go s.tick()
	return s
}

func (s *statusLine) tick() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
			s.mu.Lock()
			s.show()
			s.mu.Unlock()
		}
	}
}

// show draws the line (live) or announces a long wait once (plain).
// Called with s.mu held.
func (s *statusLine) show() {
	if s.stopped || s.paused || s.what == "" || s.text.open {
		return
	}
	took := time.Since(s.since)
	if s.live {
		line := render.OneLine(s.clean(fmt.Sprintf("step %d: %s · %s", s.step, s.what, elapsed(took))), 76)
		if s.color {
			line = "\x1b[2m" + line + "\x1b[0m"
		}
		io.WriteString(s.out, "\r\x1b[K"+line) // an error (EPIPE) is no reason to stop the run
		s.shown = true
		return
	}
	if !s.shown && took >= plainAfter {
		fmt.Fprintf(s.out, "%s (step %d)…\n", s.clean(s.what), s.step)
		s.shown = true
	}
}

// erase takes the live line off the screen. Called with s.mu held.
func (s *statusLine) erase() {
	if s.live && s.shown {
		io.WriteString(s.out, "\r\x1b[K")
		s.shown = false
	}
}

// wait says the run now waits for what (at step).
func (s *statusLine) wait(step int, what string) {
	if what == s.what && step == s.step {
		return
	}
	s.step, s.what, s.since = step, what, time.Now()
	if !s.live {
		s.shown = false
	}
}

// observe follows a root run's event: sub-agents' events show as their
// parent's spawn_agent call.
func (s *statusLine) observe(e event.Event) {
	if e.Parent != "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch p := e.Payload.(type) {
	case *event.RunStarted:
		s.wait(e.Step+1, "waiting for the model")
	case *event.ModelTurn:
		s.pending = p.ToolCalls
		if p.ToolCalls == 0 {
			s.wait(e.Step+1, "waiting for the model")
		}
	case *event.ToolCall:
		what := "running " + p.Tool
		if p.Tool == "finish" {
			what, s.checks = "running the checks", 0
		}
		s.wait(e.Step, what)
	case *event.ToolResult:
		if s.pending--; s.pending <= 0 {
			s.wait(e.Step+1, "waiting for the model")
		}
	case *event.CheckStarted:
		s.wait(e.Step, checkWait(p, s.checks))
	case *event.CheckRun:
		if e.Step == 0 { // the red phase, told once it ended: the model is next
			s.wait(max(s.step, 1), "waiting for the model")
			break
		}
		s.checks++
		s.wait(e.Step, fmt.Sprintf("running the checks (%d done, last: check %s)", s.checks, p.Check))
	case *event.Retry:
		if p.RetryAttempt != nil {
			s.wait(e.Step, fmt.Sprintf("waiting to call the model again (attempt %d)", p.Attempt+1))
		}
	case *event.Verdict, *event.Proposal:
		s.wait(e.Step, "")
	case *event.Outcome:
		s.wait(e.Step, "")
	}
}

// checkWait is the wait while check p runs: "running check test (red
// phase, 1 done)".
func checkWait(p *event.CheckStarted, done int) string {
	var notes []string
	if p.Phase == "red" {
		notes = append(notes, "red phase: the unchanged tree")
	}
	if done > 0 {
		notes = append(notes, fmt.Sprintf("%d done", done))
	}
	what := "running check " + p.Check
	if len(notes) > 0 {
		what += " (" + strings.Join(notes, ", ") + ")"
	}
	return what
}

// writer returns w with the live line cleared before each write and
// drawn again after a write that ends a line.
func (s *statusLine) writer(w io.Writer) statusWriter { return statusWriter{s: s, w: w} }

type statusWriter struct {
	s *statusLine
	w io.Writer
}

func (sw statusWriter) Write(p []byte) (int, error) {
	s := sw.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.erase()
	s.endText(sw.w)
	n, err := sw.w.Write(p)
	if len(p) > 0 && p[len(p)-1] == '\n' && s.live {
		s.show()
	}
	return n, err
}

// streamText writes a piece of a turn's streamed text: behind prefix on
// a new line when the text line is not key's, and each line it starts
// indented under the first. Write errors are ignored (EPIPE is no reason
// to stop a run).
func (sw statusWriter) streamText(key, prefix, text string) {
	s := sw.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.erase()
	if s.text.key != key {
		s.endText(sw.w)
	}
	if !s.text.open {
		s.text = textLine{open: true, key: key}
		io.WriteString(sw.w, prefix)
	}
	for i, seg := range strings.Split(text, "\n") {
		if i > 0 {
			io.WriteString(sw.w, "\n")
			s.text.bol = true
		}
		if seg != "" {
			if s.text.bol {
				io.WriteString(sw.w, strings.Repeat(" ", utf8.RuneCountInString(prefix)))
			}
			io.WriteString(sw.w, seg)
			s.text.bol = false
		}
	}
}

// endText ends the streamed text's line, if one is open (its turn ended,
// or another line comes). Called with s.mu held.
func (s *statusLine) endText(w io.Writer) {
	if s.text.open && !s.text.bol {
		io.WriteString(w, "\n")
	}
	s.text = textLine{}
}

// endTurnText ends key's streamed text line when its turn is whole, so
// the status line can come back.
func (sw statusWriter) endTurnText(key string) {
	s := sw.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.text.open && s.text.key == key {
		s.endText(sw.w)
		if s.live {
			s.show()
		}
	}
}

// pause takes the line off while a prompt waits for an answer, and
// keeps it off until resume.
func (s *statusLine) pause() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.erase()
	s.paused = true
}

func (s *statusLine) resume() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.paused = false
}

// stop takes the line off for good.
func (s *statusLine) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.stopped {
		s.erase()
		s.stopped = true
		close(s.done)
	}
}

// elapsed is "7s", "1m05s".
func elapsed(d time.Duration) string {
	sec := int(d / time.Second)
	if sec < 60 {
		return fmt.Sprintf("%ds", sec)
	}
	return fmt.Sprintf("%dm%02ds", sec/60, sec%60)
}

// statusApprover keeps the status line off the approver's prompt: the
// prompt itself says what the run waits for.
type statusApprover struct {
	agent.Approver
	st *statusLine
}

func (a statusApprover) ApproveAct(ctx context.Context, req *agent.ActRequest) (agent.Decision, error) {
	a.st.pause()
	defer a.st.resume()
	return a.Approver.ApproveAct(ctx, req)
}

func (a statusApprover) ApproveChange(ctx context.Context, p *agent.Proposal) (agent.Decision, error) {
	a.st.pause()
	defer a.st.resume()
	return a.Approver.ApproveChange(ctx, p)
}

// liveTerminal says whether w is a terminal that can redraw a line.
func liveTerminal(w io.Writer, getenv func(string) string) bool {
	f, ok := w.(*os.File)
	term := getenv("TERM")
	return ok && approve.IsTerminal(f) && term != "" && !strings.EqualFold(term, "dumb")
}
