//go:build linux

package sandboxexec

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contain"
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox"
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// TestResultCarriesTier: a result names the tier that ran the command and
// its mechanisms; a forced backend below sandbox.require is refused and
// one at it runs; a bad requirement is a configuration error.
func TestResultCarriesTier(t *testing.T) {
	if sandboxtest.NoUserns() {
		t.Skip("the re-run without user namespaces checks the downgrade")
	}
	root := workspaceDir(t)
	a, err := New(Options{Require: sandbox.BackendLandlock})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Exec(context.Background(), &contain.Request{Argv: []string{"true"}, Root: root})
	if err != nil {
		t.Fatal(err)
	}
	if res.Backend != sandbox.BackendLinux && res.Backend != sandbox.BackendLandlock {
		t.Fatalf("backend %q, want a Linux tier", res.Backend)
	}
	seccomp := false
	for _, m := range res.Mechanisms {
		seccomp = seccomp || (m.Name == "seccomp" && m.State == sandbox.StateApplied)
	}
	if !seccomp || !strings.Contains(res.Containment(), "sandbox: "+res.Backend+" tier") {
		t.Errorf("result %q mechanisms %+v: want seccomp applied and the tier named", res.Containment(), res.Mechanisms)
	}

	below, err := New(Options{Backend: sandbox.BackendFloor, Require: sandbox.BackendLandlock})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := below.Exec(context.Background(), &contain.Request{Argv: []string{"true"}, Root: root}); !errors.Is(err, sandbox.ErrBelowRequired) {
		t.Errorf("floor under require landlock: %v, want ErrBelowRequired", err)
	}
	at, err := New(Options{Backend: sandbox.BackendFloor, Require: sandbox.BackendFloor})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := at.Exec(context.Background(), &contain.Request{Argv: []string{"true"}, Root: root}); err != nil || res.Backend != sandbox.BackendFloor {
		t.Errorf("floor under require floor: %+v, %v", res, err)
	}
	if _, err := New(Options{Require: "chroot"}); !errors.Is(err, ErrBadRequest) {
		t.Errorf("require chroot: %v, want ErrBadRequest", err)
	}
}

// TestDowngradeWithoutUserNamespaces re-runs TestDowngradeInside where
// user namespaces are unavailable.
func TestDowngradeWithoutUserNamespaces(t *testing.T) {
	if sandboxtest.NoUserns() {
		t.Skip("already the re-run")
	}
	sandboxtest.Rerun{Run: "^TestDowngradeInside$", Want: "TestDowngradeInside", NoUserns: true}.Do(t)
}

// TestDowngradeInside: model-produced code gets the landlock tier, the
// result and the one-time notice say why the linux tier is not used,
// staging is a private copy, and a requirement of linux refuses to run
// with the cause.
func TestDowngradeInside(t *testing.T) {
	if !sandboxtest.NoUserns() {
		t.Skip("runs only inside TestDowngradeWithoutUserNamespaces's re-run")
	}
	var mu sync.Mutex
	var told []string
	a, err := New(Options{Require: sandbox.BackendLandlock, OnDowngrade: func(tier, why string) {
		mu.Lock()
		defer mu.Unlock()
		told = append(told, tier+": "+why)
	}})
	if err != nil {
		t.Fatal(err)
	}
	root := workspaceDir(t)
	req := &contain.Request{Shell: "cat edit.txt", Root: root,
		Changes: []workspace.Change{{Path: "edit.txt", Op: workspace.OpModify, Content: []byte("staged\n")}}}
	for i := 0; i < 2; i++ {
		res, err := a.Exec(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if res.Backend != sandbox.BackendLandlock || !strings.Contains(res.Downgrade, "user namespaces unavailable") ||
			!strings.Contains(res.Containment(), "sandbox: landlock tier (downgraded; linux: user namespaces unavailable") {
			t.Fatalf("result: backend %q, %q", res.Backend, res.Containment())
		}
		if string(res.Output) != "staged\n" {
			t.Errorf("staged view in the landlock tier: %q", res.Output)
		}
		copied := false
		for _, m := range res.Mechanisms {
			copied = copied || (m.Name == "copy-stage" && m.State == sandbox.StateApplied)
		}
		if !copied {
			t.Errorf("mechanisms %+v do not say the stage is a copy", res.Mechanisms)
		}
	}
	if len(told) != 1 || !strings.HasPrefix(told[0], "landlock: linux: user namespaces unavailable") {
		t.Errorf("downgrade notices %q, want exactly one naming the cause", told)
	}
	strict, err := New(Options{Require: sandbox.BackendLinux})
	if err != nil {
		t.Fatal(err)
	}
	_, err = strict.Exec(context.Background(), req)
	if !errors.Is(err, sandbox.ErrBelowRequired) || !strings.Contains(err.Error(), "user namespaces unavailable") ||
		!strings.Contains(err.Error(), "sandbox: {require: landlock}") {
		t.Errorf("require linux: %v; want ErrBelowRequired with the cause and the fix", err)
	}
}
