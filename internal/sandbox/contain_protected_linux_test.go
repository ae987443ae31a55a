package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// TestContainProtectedDirs: inside a writable root, .git and the other
// protected directories stay read-only unless named exactly, and those the
// command creates do not survive the run.
func TestContainProtectedDirs(t *testing.T) {
	requireLinuxBackend(t)
	work := sandboxtest.Dir(t)
	for _, d := range []string{".git/hooks", ".ioh", ".vscode", ".idea", ".github/workflows"} {
		if err := os.MkdirAll(filepath.Join(work, d), 0o777); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(work, ".git", "config"), []byte("[core]\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	targets := []string{
		".git/hooks/post-checkout", ".git/config", ".ioh/config.yaml", ".vscode/tasks.json",
		".idea/workspace.xml", ".github/workflows/x.yml",
	}
	// One contained run tries every target (a run costs more than a
	// write); each attempt reports on its own line.
	const tryAll = `for p; do if printf x > "$p"; then echo "WROTE $p"; fi; done`
	var paths []string
	before := map[string]string{}
	for _, rel := range targets {
		p := filepath.Join(work, rel)
		b, _ := os.ReadFile(p)
		before[p] = string(b)
		paths = append(paths, p)
	}
	argv := append([]string{"sh", "-c", tryAll, "sh"}, paths...)
	out, output := run(t, Spec{Argv: argv, Writable: []string{work}})
	for _, p := range paths {
		if strings.Contains(output, "WROTE "+p) {
			t.Errorf("%s written inside", p)
		}
		if after, _ := os.ReadFile(p); string(after) != before[p] {
			t.Errorf("%s changed on the host: %q", p, after)
		}
	}
	if n := strings.Count(strings.ToLower(output), "read-only file system"); n != len(paths) || out.ExitCode != 0 {
		t.Errorf("want each of the %d writes refused by a read-only mount, got %d (exit %d):\n%s", len(paths), n, out.ExitCode, output)
	}
	if got := control(t, work, argv...); strings.Count(got, "WROTE ") != len(paths) {
		t.Errorf("uncontained control did not write every target:\n%s", got)
	}
	for p, b := range before {
		os.WriteFile(p, []byte(b), 0o666)
	}

	t.Run("the rest of the root stays writable", func(t *testing.T) {
		p := filepath.Join(work, "src.go")
		out, output := run(t, Spec{Argv: []string{"sh", "-c", writeOne, "sh", p}, Writable: []string{work}})
		if out.ExitCode != 0 {
			t.Fatalf("writing the root itself failed: %s", output)
		}
	})

	t.Run("named exactly it is writable", func(t *testing.T) {
		p := filepath.Join(work, ".git", "hooks", "named")
		out, output := run(t, Spec{Argv: []string{"sh", "-c", writeOne, "sh", p}, Writable: []string{work, filepath.Join(work, ".git")}})
		if out.ExitCode != 0 {
			t.Fatalf("writing .git named with --write failed: %s", output)
		}
	})

	t.Run("a worktree's .git file", func(t *testing.T) {
		wt := sandboxtest.Dir(t)
		gitFile := filepath.Join(wt, ".git")
		if err := os.WriteFile(gitFile, []byte("gitdir: /somewhere\n"), 0o666); err != nil {
			t.Fatal(err)
		}
		argv := []string{"sh", "-c", writeOne, "sh", gitFile}
		out, output := run(t, Spec{Argv: argv, Writable: []string{wt}})
		readOnly(t, out, output)
		control(t, wt, argv...)
	})

	t.Run("through a symlink with an absolute target", func(t *testing.T) {
		ws := sandboxtest.Dir(t)
		real := filepath.Join(ws, "realgit")
		if err := os.MkdirAll(filepath.Join(real, "hooks"), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(real, filepath.Join(ws, ".git")); err != nil {
			t.Fatal(err)
		}
		argv := []string{"sh", "-c", writeOne, "sh", filepath.Join(ws, ".git", "hooks", "pre-commit")}
		out, output := run(t, Spec{Argv: argv, Writable: []string{ws}})
		readOnly(t, out, output)
		control(t, ws, argv...)
	})

	t.Run("a submodule's .git file", func(t *testing.T) {
		ws := sandboxtest.Dir(t)
		if err := os.WriteFile(filepath.Join(ws, ".gitmodules"), []byte("[submodule \"lib\"]\n\tpath = third_party/lib\n\turl = https://example.com/lib\n"), 0o666); err != nil {
			t.Fatal(err)
		}
		sub := filepath.Join(ws, "third_party", "lib")
		if err := os.MkdirAll(sub, 0o777); err != nil {
			t.Fatal(err)
		}
		gitFile := filepath.Join(sub, ".git")
		if err := os.WriteFile(gitFile, []byte("gitdir: ../../.git/modules/lib\n"), 0o666); err != nil {
			t.Fatal(err)
		}
		argv := []string{"sh", "-c", writeOne, "sh", gitFile}
		out, output := run(t, Spec{Argv: argv, Writable: []string{ws}})
		readOnly(t, out, output)
		control(t, ws, argv...)
		// The rest of the submodule's tree is an ordinary part of the root.
		out, output = run(t, Spec{Argv: []string{"sh", "-c", writeOne, "sh", filepath.Join(sub, "lib.c")}, Writable: []string{ws}})
		if out.ExitCode != 0 {
			t.Errorf("writing the submodule's files failed: %s", output)
		}
	})

	t.Run("created ones do not survive", func(t *testing.T) {
		fresh := sandboxtest.Dir(t)
		script := "mkdir -p .git/hooks .vscode .github/workflows && echo x > .git/hooks/pre-commit && echo x > .vscode/tasks.json && echo x > .github/workflows/x.yml && echo ok > kept"
		out, output := run(t, Spec{Argv: []string{"sh", "-c", script}, Dir: fresh, Writable: []string{fresh}})
		if out.ExitCode != 0 {
			t.Fatalf("script failed: %s", output)
		}
		for _, rel := range []string{".git", ".vscode", ".github/workflows"} {
			if _, err := os.Lstat(filepath.Join(fresh, rel)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s created inside survived the run (%v)", rel, err)
			}
		}
		if _, err := os.Stat(filepath.Join(fresh, "kept")); err != nil {
			t.Errorf("an ordinary file did not survive: %v", err)
		}
		control(t, fresh, "sh", "-c", script)
		if _, err := os.Stat(filepath.Join(fresh, ".git/hooks/pre-commit")); err != nil {
			t.Errorf("control: %v", err)
		}
	})
}

// writeOne writes its argument from the shell (no helper binary to
// start: under -race that start dominates a run).
const writeOne = `printf x > "$1"`

// readOnly asserts a contained write failed on a read-only mount.
func readOnly(t *testing.T, out *Outcome, output string) {
	t.Helper()
	if out.ExitCode == 0 || !strings.Contains(strings.ToLower(output), "read-only file system") {
		t.Errorf("contained: exit %d, want the write refused by a read-only mount; output:\n%s", out.ExitCode, output)
	}
}

// TestTierHostRunNamesWithoutViewNames: a hand-built view that names no
// protected path (an embedder's, say) still leaves .git/hooks and the
// other directories the host runs code from read-only in a writable
// root, in both Linux tiers; a file in the root's src is written (the
// control).
func TestTierHostRunNamesWithoutViewNames(t *testing.T) {
	for _, tier := range tiersHere(t) {
		t.Run(tier, func(t *testing.T) {
			work := sandboxtest.Dir(t)
			for _, d := range []string{".git/hooks", ".github/workflows", ".vscode", "src"} {
				if err := os.MkdirAll(filepath.Join(work, d), 0o777); err != nil {
					t.Fatal(err)
				}
			}
			product := testView()
			hand := View{Read: product.Read, Masked: product.Masked} // no ProtectedNames
			const tryAll = `for p; do if printf x > "$p"; then echo "WROTE $p"; fi; done`
			hooks := []string{".git/hooks/pre-commit", ".github/workflows/x.yml", ".vscode/tasks.json"}
			var argv []string
			for _, rel := range append(hooks, "src/kept.txt") {
				argv = append(argv, filepath.Join(work, rel))
			}
			argv = append([]string{"sh", "-c", tryAll, "sh"}, argv...)
			out, output := runTier(t, Spec{Argv: argv, Dir: work, Writable: []string{work}, Backend: tier, View: hand})
			for _, rel := range hooks {
				p := filepath.Join(work, rel)
				if strings.Contains(output, "WROTE "+p) {
					t.Errorf("%s written inside through a view without protected names", rel)
				}
				if _, err := os.Stat(p); err == nil {
					t.Errorf("%s exists on the host after the run", rel)
				}
			}
			if !strings.Contains(output, "WROTE "+filepath.Join(work, "src", "kept.txt")) {
				t.Errorf("control: the file beside them was not written (exit %d):\n%s", out.ExitCode, output)
			}
		})
	}
}
