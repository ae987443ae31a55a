package generate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/eval/runner"
)

// Options say what to generate.
type Options struct {
	// Repo is the Go module's root directory.
	Repo string
	// Packages are `go list` patterns relative to Repo (default ./...).
	Packages []string
	Count    int
	Seed     int64
	// Out is the suite directory to write: suite.yaml, tasks/ID/ (the
	// repository with the mutation applied and task.ioh.yaml) and, with
	// Cassettes, replay cassettes of two variants.
	Out string
	// Cassettes writes cassettes/restore/ID.json (a model that puts the
	// original code back) and cassettes/noop/ID.json (one that reads
	// and gives up), and the suite's two variants replaying them.
	Cassettes bool
	// MaxTries bounds the mutations tried (default 10 × Count).
	MaxTries int
	// Log gets a line per mutation tried (nil: none).
	Log io.Writer
}

// Task is one kept mutation.
type Task struct {
	ID      string
	Site    Site
	Package string   // import path
	Rel     string   // the mutated file, relative to Repo
	Tests   []string // the tests that fail with it
	Output  string   // their failing output
}

type pkg struct {
	Dir, ImportPath string
	GoFiles         []string
}

// Generate writes a suite of up to o.Count tasks and returns them.
func Generate(ctx context.Context, o Options) ([]Task, error) {
	if o.Count < 1 {
		return nil, errors.New("the count must be at least 1")
	}
	if o.MaxTries == 0 {
		o.MaxTries = 10 * o.Count
	}
	repo, err := filepath.Abs(o.Repo)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(repo, "go.mod")); err != nil {
		return nil, fmt.Errorf("%s is not a Go module's root (no go.mod): name the directory that holds go.mod", repo)
	}
	if len(o.Packages) == 0 {
		o.Packages = []string{"./..."}
	}
	// Mutations are tried in a copy: an interrupted generation never
	// leaves the repository mutated.
	scratch, err := os.MkdirTemp("", "ioh-generate-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)
	work := filepath.Join(scratch, filepath.Base(repo))
	if err := copyTree(repo, work); err != nil {
		return nil, fmt.Errorf("copy %s: %w", repo, err)
	}
	kept, err := generateIn(ctx, work, o)
	if err != nil {
		return kept, err
	}
	return kept, write(repo, work, o, kept)
}

func generateIn(ctx context.Context, repo string, o Options) ([]Task, error) {
	pkgs, err := listPackages(ctx, repo, o.Packages)
	if err != nil {
		return nil, err
	}
	all, err := candidates(ctx, repo, pkgs)
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("no mutation site in code the tests of %s cover", strings.Join(o.Packages, " "))
	}
	rand.New(rand.NewSource(o.Seed)).Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	var kept []Task
	for i, c := range all {
		if len(kept) == o.Count || i == o.MaxTries {
			break
		}
		t, ok, err := try(ctx, repo, c)
		if err != nil {
			return kept, err
		}
		if o.Log != nil {
			verdict := "no test fails: dropped"
			if ok {
				verdict = "kept: " + strings.Join(t.Tests, ", ") + " fail"
			}
			rel, _ := filepath.Rel(repo, c.site.File)
			fmt.Fprintf(o.Log, "%s:%d %s in %s: %q → %q: %s\n", rel, c.site.Line, c.site.Kind, c.site.Func, c.site.Old, c.site.New, verdict)
		}
		if ok {
			t.ID = fmt.Sprintf("%03d-%s-%s", len(kept)+1, strings.ToLower(c.site.Func), c.site.Kind)
			kept = append(kept, t)
		}
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("none of the %d mutations tried made a test fail", min(len(all), o.MaxTries))
	}
	return kept, nil
}

// candidate is a site with its package.
type candidate struct {
	site Site
	pkg  pkg
}

func listPackages(ctx context.Context, repo string, patterns []string) ([]pkg, error) {
	out, err := goCmd(ctx, repo, append([]string{"list", "-json=Dir,ImportPath,GoFiles"}, patterns...)...)
	if err != nil {
		return nil, err
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			return nil, err
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("no package matches %s in %s", strings.Join(patterns, " "), repo)
	}
	return pkgs, nil
}

// candidates runs each package's tests with coverage (they must pass)
// and lists the mutation sites in covered code, in a fixed order.
func candidates(ctx context.Context, repo string, pkgs []pkg) ([]candidate, error) {
	var all []candidate
	tmp, err := os.MkdirTemp("", "ioh-generate-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	for _, p := range pkgs {
		prof := filepath.Join(tmp, "cover.out")
		if out, err := goCmd(ctx, repo, "test", "-count=1", "-vet=off", "-coverprofile="+prof, p.ImportPath); err != nil {
			return nil, fmt.Errorf("the tests of %s fail without any mutation; fix them first: %w\n%s", p.ImportPath, err, tail(string(out), 20))
		}
		data, err := os.ReadFile(prof)
		if err != nil {
			continue // a package without test files
		}
		prof2 := parseProfile(data)
		for _, f := range p.GoFiles {
			path := filepath.Join(p.Dir, f)
			src, err := os.ReadFile(path)
			if err != nil {
				return nil, err
			}
			cov := prof2[p.ImportPath+"/"+f]
			ss, err := sites(path, src, cov.has)
			if err != nil {
				return nil, err
			}
			for _, s := range ss {
				all = append(all, candidate{site: s, pkg: p})
			}
		}
	}
	return all, nil
}

// try applies c, runs its package's tests, restores the file and runs
// the failing tests again: a mutation counts when some test fails with
// it (not a build failure) and those tests pass on the original.
func try(ctx context.Context, repo string, c candidate) (Task, bool, error) {
	orig, err := os.ReadFile(c.site.File)
	if err != nil {
		return Task{}, false, err
	}
	if err := os.WriteFile(c.site.File, c.site.Apply(orig), 0o644); err != nil {
		return Task{}, false, err
	}
	out, _ := goCmd(ctx, repo, "test", "-count=1", "-vet=off", "-timeout="+tryTimeout, "-json", c.pkg.ImportPath)
	if err := os.WriteFile(c.site.File, orig, 0o644); err != nil {
		return Task{}, false, fmt.Errorf("restore %s: %w", c.site.File, err)
	}
	tests, output := failures(out)
	if len(tests) == 0 || bytes.Contains(out, []byte("panic: test timed out")) {
		// A build failure fails no test; a loop without end is not a
		// task a check can judge quickly.
		return Task{}, false, ctx.Err()
	}
	if _, err := goCmd(ctx, repo, "test", "-count=1", "-vet=off", "-timeout="+tryTimeout, "-run", runPattern(tests), c.pkg.ImportPath); err != nil {
		return Task{}, false, ctx.Err() // fails on the original too: flaky
	}
	rel, _ := filepath.Rel(repo, c.site.File)
	return Task{Site: c.site, Package: c.pkg.ImportPath, Rel: filepath.ToSlash(rel), Tests: tests, Output: output}, true, nil
}

// tryTimeout bounds the tests of one mutation.
const tryTimeout = "60s"

// failures reads go test -json output: the top-level tests that failed
// and their output.
func failures(out []byte) ([]string, string) {
	outputs := map[string]*strings.Builder{}
	var failed []string
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var e struct{ Action, Test, Output string }
		if dec.Decode(&e) != nil {
			break
		}
		if e.Test == "" || strings.Contains(e.Test, "/") {
			continue
		}
		if outputs[e.Test] == nil {
			outputs[e.Test] = &strings.Builder{}
		}
		switch e.Action {
		case "output":
			outputs[e.Test].WriteString(e.Output)
		case "fail":
			failed = append(failed, e.Test)
		}
	}
	sort.Strings(failed)
	var b strings.Builder
	for _, t := range failed {
		b.WriteString(outputs[t].String())
	}
	return failed, tail(b.String(), 30)
}

func runPattern(tests []string) string {
	q := make([]string, len(tests))
	for i, t := range tests {
		q[i] = regexp.QuoteMeta(t)
	}
	return "^(" + strings.Join(q, "|") + ")$"
}

func tail(s string, lines int) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(ls) > lines {
		ls = append([]string{fmt.Sprintf("[%d lines before cut]", len(ls)-lines)}, ls[len(ls)-lines:]...)
	}
	return strings.Join(ls, "\n")
}

func goCmd(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOTOOLCHAIN=local", "GOPROXY=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil && len(out) == 0 {
		out = stderr.Bytes()
	}
	if err != nil && args[0] == "list" {
		return nil, fmt.Errorf("go list %s: %v: %s", strings.Join(args[2:], " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, err
}

// copyTree copies a work tree as an eval cell's copy is made.
var copyTree = runner.CopyTree
