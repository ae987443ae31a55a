package approve

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/verify"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

func actReq() *agent.ActRequest {
	return &agent.ActRequest{Run: "r-1", Step: 3, Tool: "run", Verdict: policy.Verdict{
		Act: policy.ActExec, Target: "curl https://x", Effect: policy.Ask, Layer: policy.LayerDefault,
		Reason: "no rule matched: the default for exec is ask"}}
}

func TestTerminalApproveAct(t *testing.T) {
	tests := []struct {
		input string
		want  agent.Decision
	}{
		{"o\n", agent.Decision{Answer: agent.AllowOnce}},
		{"Once\n", agent.Decision{Answer: agent.AllowOnce}},
		{"r\n", agent.Decision{Answer: agent.AllowRun}},
		{"d\nnot on this network\n", agent.Decision{Answer: agent.Deny, Reason: "not on this network"}},
		{"d\n\n", agent.Decision{Answer: agent.Deny}},
		{"x\n\nmaybe\nr\n", agent.Decision{Answer: agent.AllowRun}},
		{"", agent.Decision{Answer: agent.Defer}},
		{"x\nx\nx\nx\nx\no\n", agent.Decision{Answer: agent.Defer}},
		{"o\r\n", agent.Decision{Answer: agent.AllowOnce}},
	}
	for _, tt := range tests {
		var out strings.Builder
		term := &Terminal{In: strings.NewReader(tt.input), Out: &out}
		got, err := term.ApproveAct(context.Background(), actReq())
		if err != nil {
			t.Fatalf("input %q: %v", tt.input, err)
		}
		if diff := cmp.Diff(got, tt.want); diff != "" {
			t.Errorf("input %q (-got +want):\n%s", tt.input, diff)
		}
		for _, s := range []string{"run r-1, step 3: run wants to exec curl https://x", "policy: no rule matched", "[o]nce"} {
			if !strings.Contains(out.String(), s) {
				t.Errorf("input %q: prompt lacks %q:\n%s", tt.input, s, out.String())
			}
		}
	}
}

// TestTerminalSharesInput: answers for successive prompts come from one
// reader; reading one answer must not swallow the next.
func TestTerminalSharesInput(t *testing.T) {
	var out strings.Builder
	term := &Terminal{In: strings.NewReader("r\nd\nno\no\n"), Out: &out}
	var got []agent.Decision
	for range 3 {
		d, err := term.ApproveAct(context.Background(), actReq())
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, d)
	}
	want := []agent.Decision{{Answer: agent.AllowRun}, {Answer: agent.Deny, Reason: "no"}, {Answer: agent.AllowOnce}}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
}

func TestTerminalCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	term := &Terminal{In: strings.NewReader("o\n"), Out: &strings.Builder{}}
	if _, err := term.ApproveAct(ctx, actReq()); !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}

func proposal(t *testing.T) *agent.Proposal {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n\nvar X = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := workspace.NewRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	cs := workspace.NewChangeSet(root)
	if err := cs.WriteFile("a.go", []byte("package a\n\nvar X = 2\n")); err != nil {
		t.Fatal(err)
	}
	rep := &verify.Report{Passed: true, Proves: true, Warnings: []string{"check unit: the change set modifies Makefile, which configures make"},
		Checks: []verify.CheckResult{
			{Name: "unit", Phase: verify.PhaseRed, ExitCode: 1, Locations: []verify.Location{{Path: "a_test.go", Line: 7, Message: "X = 1, want 2"}}},
			{Name: "unit", Phase: verify.PhaseGreen, Passed: true},
		}}
	return &agent.Proposal{Run: "r-2", Goal: "set X to 2", Summary: "changed X", Changes: cs, Report: rep, Verified: true}
}

func TestTerminalApproveChange(t *testing.T) {
	tests := []struct {
		input string
		want  agent.Decision
	}{
		{"a\n", agent.Decision{Answer: agent.AllowOnce}},
		{"r\nwrong approach\n", agent.Decision{Answer: agent.Deny, Reason: "wrong approach"}},
		{"r\n", agent.Decision{Answer: agent.Deny, Reason: "rejected by the user"}},
		{"d\n", agent.Decision{Answer: agent.Defer}},
		{"", agent.Decision{Answer: agent.Defer}},
	}
	for _, tt := range tests {
		var out strings.Builder
		term := &Terminal{In: strings.NewReader(tt.input), Out: &out}
		got, err := term.ApproveChange(context.Background(), proposal(t))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(got, tt.want); diff != "" {
			t.Errorf("input %q (-got +want):\n%s", tt.input, diff)
		}
		for _, s := range []string{
			"run r-2: set X to 2", "summary: changed X",
			"-var X = 1", "+var X = 2",
			"red   unit: FAILED (exit 1)", "a_test.go:7: X = 1, want 2", "green unit: passed",
			"warning: check unit: the change set modifies Makefile", "=> verified",
		} {
			if !strings.Contains(out.String(), s) {
				t.Errorf("input %q: output lacks %q:\n%s", tt.input, s, out.String())
			}
		}
	}
}

func TestAutoNeverDeferral(t *testing.T) {
	ctx := context.Background()
	verified := &agent.Proposal{Verified: true}
	unverified := &agent.Proposal{Verified: false}
	tests := []struct {
		name     string
		a        agent.Approver
		act      agent.Answer
		verified agent.Answer
		other    agent.Answer
	}{
		{"auto", Auto{}, agent.Deny, agent.AllowOnce, agent.Defer},
		{"auto allowing acts", Auto{AllowActs: true}, agent.AllowOnce, agent.AllowOnce, agent.Defer},
		{"never", Never{}, agent.Deny, agent.Defer, agent.Defer},
		{"deferral", Deferral{}, agent.Defer, agent.Defer, agent.Defer},
	}
	for _, tt := range tests {
		act, err := tt.a.ApproveAct(ctx, actReq())
		if err != nil || act.Answer != tt.act {
			t.Errorf("%s: act = %+v, %v; want %s", tt.name, act, err, tt.act)
		}
		if act.Answer == agent.Deny && !strings.Contains(act.Reason, "exec curl https://x") {
			t.Errorf("%s: deny reason %q does not name the act", tt.name, act.Reason)
		}
		if d, _ := tt.a.ApproveChange(ctx, verified); d.Answer != tt.verified {
			t.Errorf("%s: verified change = %s, want %s", tt.name, d.Answer, tt.verified)
		}
		if d, _ := tt.a.ApproveChange(ctx, unverified); d.Answer != tt.other {
			t.Errorf("%s: unverified change = %s, want %s", tt.name, d.Answer, tt.other)
		}
	}
}

// TestAutoHoldsAChangeThatTouchesItsChecks: a verified change whose
// report says it touches its own checks is deferred with the reason; the
// same change without that mark is applied.
func TestAutoHoldsAChangeThatTouchesItsChecks(t *testing.T) {
	marked := &agent.Proposal{Verified: true, Report: &verify.Report{Passed: true, Proves: true,
		TouchesChecks: []string{"adds main_test.go, a test file"}}}
	d, err := Auto{}.ApproveChange(context.Background(), marked)
	if err != nil || d.Answer != agent.Defer || !strings.Contains(d.Reason, "waits for a human: adds main_test.go, a test file") {
		t.Errorf("marked change: %+v, %v; want deferred with the reason", d, err)
	}
	clean := &agent.Proposal{Verified: true, Report: &verify.Report{Passed: true, Proves: true}}
	if d, _ := (Auto{}).ApproveChange(context.Background(), clean); d.Answer != agent.AllowOnce {
		t.Errorf("control: unmarked verified change = %s, want %s", d.Answer, agent.AllowOnce)
	}
	var out strings.Builder
	WriteReport(&out, marked.Report, true)
	if !strings.Contains(out.String(), "REVIEW CAREFULLY: the change touches its own checks:\n    adds main_test.go, a test file") {
		t.Errorf("the terminal review does not show the mark:\n%s", out.String())
	}
}

func TestForMode(t *testing.T) {
	for mode, want := range map[string]string{"ask": "*approve.Terminal", "": "*approve.Terminal", "auto": "approve.Auto", "never": "approve.Never"} {
		a, err := ForMode(mode, strings.NewReader(""), &strings.Builder{})
		if err != nil {
			t.Fatal(err)
		}
		if got := typeName(a); got != want {
			t.Errorf("ForMode(%q) = %s, want %s", mode, got, want)
		}
	}
	if _, err := ForMode("sometimes", nil, nil); err == nil || err.Error() != `unknown approve mode "sometimes": want ask, auto or never` {
		t.Errorf("bad mode error: %v", err)
	}
}

func typeName(a agent.Approver) string {
	switch a.(type) {
	case *Terminal:
		return "*approve.Terminal"
	case Auto:
		return "approve.Auto"
	case Never:
		return "approve.Never"
	}
	return "?"
}

// TestTerminalPromptEndsWithContext: a prompt waiting on input that never
// comes (a terminal nobody types into) returns the context's error as
// soon as the context is cancelled, and what is typed later answers the
// next prompt whole. Control: without the cancellation the prompt is
// still waiting.
func TestTerminalPromptEndsWithContext(t *testing.T) {
	in, typing := io.Pipe()
	defer typing.Close()
	var out syncBuffer
	term := &Terminal{In: in, Out: &out}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := term.ApproveChange(ctx, &agent.Proposal{Run: "r-1", Goal: "g"})
		done <- err
	}()
	for !strings.Contains(out.String(), "[a]pply") {
		runtime.Gosched()
	}
	select {
	case err := <-done:
		t.Fatalf("control: the prompt returned (%v) before the cancellation with no input", err)
	default:
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled prompt: %v, want context.Canceled", err)
	}
	// The read left pending gets the first byte of the next answer.
	go typing.Write([]byte("o\n"))
	got, err := term.ApproveAct(context.Background(), actReq())
	if err != nil || got.Answer != agent.AllowOnce {
		t.Errorf("next prompt = %+v, %v; want allow once", got, err)
	}
}

// syncBuffer is a strings.Builder safe for a writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestAutoHoldsAChangeThatRunsOnTheMachine: a verified change that writes
// a file the host runs later (a pre-commit configuration, the work tree's
// configured hooks directory) or makes code read its environment is
// deferred with the file named; the terminal review shows it. The
// control: a verified plain source change is applied.
func TestAutoHoldsAChangeThatRunsOnTheMachine(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".git", "config"), []byte("[core]\n\thooksPath = tools/hooks\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "calc.go"), []byte("package calc\n\nfunc Add(a, b int) int { return a - b }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.NewRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	propose := func(rel, content string) *agent.Proposal {
		cs := workspace.NewChangeSet(ws)
		if err := cs.WriteFile(rel, []byte(content)); err != nil {
			t.Fatal(err)
		}
		return &agent.Proposal{Verified: true, Changes: cs, Report: &verify.Report{Passed: true, Proves: true}}
	}
	for _, tc := range []struct{ rel, content, want string }{
		{".pre-commit-config.yaml", "repos: []\n", ".pre-commit-config.yaml: runs on your machine later"},
		{"tools/hooks/pre-push", "#!/bin/sh\n", "tools/hooks/pre-push: runs on your machine later"},
		{"calc.go", "package calc\n\nimport \"os\"\n\nfunc Add(a, b int) int {\n\tif os.Getenv(\"HOME\") == \"/tmp/home\" {\n\t\treturn a + b\n\t}\n\treturn a - b\n}\n", "calc.go: line 6 reads its environment (os.Getenv)"},
	} {
		p := propose(tc.rel, tc.content)
		d, err := Auto{}.ApproveChange(context.Background(), p)
		if err != nil || d.Answer != agent.Defer || !strings.Contains(d.Reason, tc.want) {
			t.Errorf("%s: %+v, %v; want deferred naming %q", tc.rel, d, err, tc.want)
		}
		var out strings.Builder
		term := &Terminal{In: strings.NewReader("d\n"), Out: &out}
		if _, err := term.ApproveChange(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "REVIEW CAREFULLY: the change runs on your machine later or reads its environment:\n    "+tc.want) {
			t.Errorf("%s: the terminal review does not show the hold:\n%s", tc.rel, out.String())
		}
	}
	p := propose("calc.go", "package calc\n\nfunc Add(a, b int) int { return a + b }\n")
	if d, _ := (Auto{}).ApproveChange(context.Background(), p); d.Answer != agent.AllowOnce {
		t.Errorf("control: a verified plain source change = %+v, want %s", d, agent.AllowOnce)
	}
}
