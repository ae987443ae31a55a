package verify

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contain"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// scriptedSandbox is a test double for contain.Sandbox: it records each
// request and answers from a function, so the runner's logic can be tested
// without running anything. The real sandbox is exercised in
// sandbox_test.go.
type scriptedSandbox struct {
	mu     sync.Mutex
	reqs   []contain.Request
	answer func(req *contain.Request) (*contain.Result, error)
}

func (s *scriptedSandbox) Exec(ctx context.Context, req *contain.Request) (*contain.Result, error) {
	s.mu.Lock()
	s.reqs = append(s.reqs, *req)
	s.mu.Unlock()
	return s.answer(req)
}

// fixedBy answers like a check that fails without the change set and
// passes with it.
func fixedBy(req *contain.Request) (*contain.Result, error) {
	if req.Changes == nil {
		return &contain.Result{ExitCode: 1, Output: []byte("x_test.go:3: want 2"), Backend: "fake"}, nil
	}
	return &contain.Result{ExitCode: 0, Output: []byte("ok"), Backend: "fake"}, nil
}

var fix = []workspace.Change{{Path: "x.go", Op: workspace.OpModify, Content: []byte("package x\n")}}

func TestRunRedGreen(t *testing.T) {
	tests := []struct {
		name         string
		answer       func(*contain.Request) (*contain.Result, error)
		redGreen     bool
		wantPhases   []string
		wantPassed   bool
		wantProves   bool
		wantWarnings []string
	}{
		{"honest", fixedBy, true, []string{"red", "red", "green", "green"}, true, true, nil},
		{"passes before the change", func(*contain.Request) (*contain.Result, error) {
			return &contain.Result{ExitCode: 0}, nil
		}, true, []string{"red", "red", "green", "green"}, true, false, []string{
			"check unit passed before the change: it proves nothing",
			"check lint passed before the change: it proves nothing",
		}},
		{"fails before only by timeout", func(req *contain.Request) (*contain.Result, error) {
			if req.Changes == nil {
				return &contain.Result{ExitCode: -1, CapHit: "wall"}, nil
			}
			return &contain.Result{}, nil
		}, true, []string{"red", "red", "green", "green"}, true, true, []string{
			"check unit failed before the change only by hitting the wall cap: weak evidence",
			"check lint failed before the change only by hitting the wall cap: weak evidence",
		}},
		{"fails after the change", func(*contain.Request) (*contain.Result, error) {
			return &contain.Result{ExitCode: 2, Output: []byte("boom")}, nil
		}, true, []string{"red", "red", "green", "green"}, false, true, nil},
		{"no red/green", fixedBy, false, []string{"green", "green"}, true, true, nil},
		{"killed by signal", func(*contain.Request) (*contain.Result, error) {
			return &contain.Result{ExitCode: 0, Signal: "killed"}, nil
		}, false, []string{"green", "green"}, false, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sb := &scriptedSandbox{answer: tt.answer}
			v := contract.Verify{RedGreen: tt.redGreen, Checks: []contract.Check{
				// exit code only: per-test evidence is tested in evidence_test.go
				{Name: "unit", Run: []string{"make", "test"}, Timeout: time.Minute},
				{Name: "lint", Shell: "go vet ./...", Network: true},
			}}
			var seen []string
			rep, err := Run(context.Background(), sb, "/ws", fix, v, func(c CheckResult) { seen = append(seen, c.Phase+":"+c.Name) })
			if err != nil {
				t.Fatal(err)
			}
			var phases []string
			for _, c := range rep.Checks {
				phases = append(phases, c.Phase)
			}
			if diff := cmp.Diff(phases, tt.wantPhases); diff != "" {
				t.Errorf("phases (-got +want):\n%s", diff)
			}
			if rep.Passed != tt.wantPassed || rep.Proves != tt.wantProves {
				t.Errorf("passed, proves = %v, %v; want %v, %v", rep.Passed, rep.Proves, tt.wantPassed, tt.wantProves)
			}
			if rep.Verified() != (tt.wantPassed && tt.wantProves) {
				t.Errorf("Verified() = %v", rep.Verified())
			}
			if diff := cmp.Diff(rep.Warnings, tt.wantWarnings); diff != "" {
				t.Errorf("warnings (-got +want):\n%s", diff)
			}
			if len(seen) != len(tt.wantPhases) {
				t.Errorf("onCheck saw %v", seen)
			}
			for _, r := range sb.reqs {
				if r.Root != "/ws" || r.OutputLimit != DefaultOutputLimit {
					t.Errorf("request %+v: want root /ws and the default output limit", r)
				}
				wantNet := r.Shell != ""
				if r.Network != wantNet {
					t.Errorf("request %v/%q: network %v, want %v", r.Argv, r.Shell, r.Network, wantNet)
				}
				if len(r.Argv) > 0 && r.Timeout != time.Minute {
					t.Errorf("argv check timeout %v, want 1m", r.Timeout)
				}
			}
		})
	}
}

func TestRunRequestsStageTheChangeSetOnlyInGreen(t *testing.T) {
	sb := &scriptedSandbox{answer: fixedBy}
	v := contract.Verify{RedGreen: true, Checks: []contract.Check{{Name: "unit", Run: []string{"true"}}}}
	if _, err := Run(context.Background(), sb, "/ws", fix, v, nil); err != nil {
		t.Fatal(err)
	}
	if len(sb.reqs) != 2 || sb.reqs[0].Changes != nil || len(sb.reqs[1].Changes) != 1 {
		t.Fatalf("requests %+v: want the bare tree first, then the change set", sb.reqs)
	}
}

func TestRunLocationsAndBoundedOutput(t *testing.T) {
	root := writeTree(t, map[string]string{"a/b.go": "package a\n"})
	big := strings.Repeat("x", 5000)
	sb := &scriptedSandbox{answer: func(*contain.Request) (*contain.Result, error) {
		return &contain.Result{ExitCode: 1, Output: []byte("a/b.go:3:1: undefined: y\n" + big)}, nil
	}}
	rep, err := RunWith(context.Background(), Options{Sandbox: sb, Root: root, Changes: fix, OutputLimit: 1000,
		Verify: contract.Verify{Checks: []contract.Check{{Name: "build", Run: []string{"go", "build"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Checks[0]
	if diff := cmp.Diff(c.Locations, []Location{{Path: "a/b.go", Line: 3, Col: 1, Message: "undefined: y"}}); diff != "" {
		t.Errorf("locations (-got +want):\n%s", diff)
	}
	if len(c.Output) > 1100 || !strings.Contains(c.Output, "bytes left out here") || !strings.HasPrefix(c.Output, "a/b.go:3:1") {
		t.Errorf("output not bounded to head and tail: %d bytes, tail %q", len(c.Output), c.Output[len(c.Output)-20:])
	}
	if diff := cmp.Diff(rep.Failures(), []CheckResult{c}); diff != "" {
		t.Errorf("failures (-got +want):\n%s", diff)
	}
}

func TestRunErrors(t *testing.T) {
	boom := errors.New("no namespaces")
	ok := &scriptedSandbox{answer: fixedBy}
	failing := &scriptedSandbox{answer: func(*contain.Request) (*contain.Result, error) { return nil, boom }}
	one := contract.Verify{Checks: []contract.Check{{Name: "unit", Run: []string{"true"}}}}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		sb   contain.Sandbox
		v    contract.Verify
		is   error
		msg  string
	}{
		{"no checks", context.Background(), ok, contract.Verify{}, ErrNoChecks, "verify: the contract has no checks"},
		{"no sandbox", context.Background(), nil, one, nil, "verify: no sandbox"},
		{"run and shell", context.Background(), ok, contract.Verify{Checks: []contract.Check{{Name: "x", Run: []string{"a"}, Shell: "b"}}}, nil,
			"verify: check 0 (x): want exactly one of run and shell"},
		{"neither", context.Background(), ok, contract.Verify{Checks: []contract.Check{{}}}, nil,
			"verify: check 0 (): want exactly one of run and shell"},
		{"sandbox fails", context.Background(), failing, one, boom, "verify unit (green): run in sandbox: no namespaces"},
		{"cancelled", cancelled, ok, one, context.Canceled, "verify unit (green): context canceled"},
	}
	for _, tt := range tests {
		_, err := Run(tt.ctx, tt.sb, "/ws", fix, tt.v, nil)
		if err == nil || err.Error() != tt.msg {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.msg)
		}
		if tt.is != nil && !errors.Is(err, tt.is) {
			t.Errorf("%s: %v is not %v", tt.name, err, tt.is)
		}
	}
}

func TestTouchedInputs(t *testing.T) {
	v := contract.Verify{
		Protect: []string{"testdata/golden", "x_test.go"},
		Checks: []contract.Check{
			{Name: "script", Run: []string{"./scripts/check.sh", "--config=ci/conf.yaml", "x.go"}},
			{Name: "make", Shell: "make test && pytest -q"},
			{Name: "unit", Run: []string{"go", "test", "./..."}},
			{Name: "wrapped", Run: []string{"go", "test", "-exec", "tools/wrap.sh", "./..."}},
			{Name: "hooked", Shell: "node --require ./hook.js --test"},
		},
	}
	changes := []workspace.Change{
		{Path: "scripts/check.sh", Op: workspace.OpModify},
		{Path: "ci/conf.yaml", Op: workspace.OpModify},
		{Path: "x.go", Op: workspace.OpModify},
		{Path: "Makefile", Op: workspace.OpModify},
		{Path: "tests/conftest.py", Op: workspace.OpCreate},
		{Path: "testdata/golden/out.txt", Op: workspace.OpModify},
		{Path: "task.ioh.yaml", Op: workspace.OpCreate, From: "old.ioh.yaml"},
		{Path: "lib/lib.go", Op: workspace.OpModify},
		{Path: "tools/wrap.sh", Op: workspace.OpModify},
		{Path: "hook.js", Op: workspace.OpCreate},
	}
	want := []string{
		"the change set modifies the task contract task.ioh.yaml",
		"the change set modifies protected file testdata/golden/out.txt",
		"check script: the change set modifies scripts/check.sh, the program it runs",
		"check script: the change set modifies ci/conf.yaml, a file passed to it as an option",
		"check make: the change set modifies Makefile, which configures make",
		"check make: the change set modifies tests/conftest.py, which configures pytest",
		// the program go test runs the test binary with, a module node
		// loads before the tests: holds, though the option's value is a
		// separate word
		"check wrapped: the change set modifies tools/wrap.sh, a file passed to it as an option",
		"check hooked: the change set modifies hook.js, a file passed to it as an option",
		// a file the check only reads: a warning, not a hold
		"check script: the change set modifies x.go, a file named in its command",
	}
	if diff := cmp.Diff(TouchedInputs(v, changes, "task.ioh.yaml"), want); diff != "" {
		t.Errorf("warnings (-got +want):\n%s", diff)
	}
	if got := TouchedInputs(v, []workspace.Change{{Path: "lib/lib.go"}}, ""); got != nil {
		t.Errorf("code under test reported: %v", got)
	}
}
