package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/view"
)

// TestToolchainRootsNotWhole: fake toolchains under the test's own home
// (node unpacked into ~/.local, nvm's prefix, a virtualenv, a conda
// environment, a pyenv version) bring into the view, in both tiers, what
// a toolchain reads (their bin, lib, pyvenv.cfg) and not the rest of
// their roots: ~/.local/share, nvm's etc/npmrc, the virtualenv's
// pip.conf, conda's .condarc, a pyenv version's pip.conf, nor a
// credential file inside a part of the view. Outside the sandbox each is
// read.
func TestToolchainRootsNotWhole(t *testing.T) {
	h := helperPath(t)
	w := newWorld(t)
	home := w.home
	mark := fmt.Sprintf("TOOLCHAIN-%d", os.Getpid())
	put := func(rel, content string, mode os.FileMode) string {
		p := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content+"\n"), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	node := "#!/bin/sh\necho fake node\n"
	type file struct {
		rel    string
		inside bool
	}
	layouts := []struct {
		name  string
		env   func() []string
		files []file
	}{
		{"node in ~/.local", func() []string {
			put(".local/bin/node", node, 0o755)
			return []string{"PATH=" + filepath.Join(home, ".local/bin") + ":/usr/bin:/bin"}
		}, []file{{".local/lib/node_modules/pkg/index.js", true}, {".local/share/keyrings/login.keyring", false}, {".local/share/fish/fish_history", false}}},
		{"nvm's prefix", func() []string {
			put(".nvm/versions/node/v20.1.0/bin/node", node, 0o755)
			return []string{"PATH=" + filepath.Join(home, ".nvm/versions/node/v20.1.0/bin") + ":/usr/bin:/bin"}
		}, []file{{".nvm/versions/node/v20.1.0/lib/node_modules/npm/package.json", true}, {".nvm/versions/node/v20.1.0/etc/npmrc", false}, {".nvm/alias/default", false}}},
		{"virtualenv", func() []string { return []string{"VIRTUAL_ENV=" + filepath.Join(home, "venv")} },
			[]file{{"venv/lib/python3.12/site-packages/m.py", true}, {"venv/pyvenv.cfg", true}, {"venv/pip.conf", false}, {"venv/lib/pip.conf", false}}},
		{"conda environment", func() []string { return []string{"CONDA_PREFIX=" + filepath.Join(home, "miniconda3/envs/e")} },
			[]file{{"miniconda3/envs/e/bin/python3", true}, {"miniconda3/envs/e/.condarc", false}, {"miniconda3/envs/e/etc/conda/activate.d/x.sh", false}}},
		{"pyenv version", func() []string { return []string{"PYENV_ROOT=" + filepath.Join(home, "pyenv")} },
			[]file{{"pyenv/versions/3.12.1/lib/python3.12/os.py", true}, {"pyenv/shims/python", true}, {"pyenv/versions/3.12.1/pip.conf", false}, {"pyenv/versions/3.12.1/etc/pip.conf", false}}},
	}
	for _, tier := range tiersHere(t) {
		// A credential file made right after a run is out of the next
		// run's view: the view caches look at the toolchain directories.
		t.Run(tier+"/made after a run", func(t *testing.T) {
			env := []string{"VIRTUAL_ENV=" + filepath.Join(home, "venv2")}
			put("venv2/lib/python3.12/site-packages/m.py", "", 0o644)
			s := Spec{Dir: w.work, Env: env, Writable: []string{w.work}, View: testViewEnv(env, w.helperDir), Backend: tier}
			s.Argv = []string{"true"}
			runTier(t, s)
			m := mark + "-late-" + tier
			p := put("venv2/lib/credentials", m, 0o644)
			s.Argv = []string{h, helperArg, "read", p}
			s.View = testViewEnv(env, w.helperDir) // the next run's Spec, built after the file was made
			if _, output := runTier(t, s); strings.Contains(output, m) {
				t.Errorf("~/venv2/lib/credentials made after a run is read inside the next:\n%s", output)
			}
		})
		for _, l := range layouts {
			t.Run(tier+"/"+l.name, func(t *testing.T) {
				env := l.env()
				paths := make([]string, len(l.files))
				for i, f := range l.files {
					paths[i] = put(f.rel, fmt.Sprintf("%s-%d", mark, i), 0o644)
				}
				for i, f := range l.files {
					m, p := fmt.Sprintf("%s-%d", mark, i), paths[i]
					_, output := runTier(t, Spec{Argv: []string{h, helperArg, "read", p}, Dir: w.work, Env: env,
						Writable: []string{w.work}, View: testViewEnv(env, w.helperDir), Backend: tier})
					if got := strings.Contains(output, m); got != f.inside {
						t.Errorf("~/%s read inside: %v, want %v:\n%s", f.rel, got, f.inside, output)
					}
					if ctl, err := exec.Command(h, helperArg, "read", p).CombinedOutput(); err != nil || !strings.Contains(string(ctl), m) {
						t.Fatalf("control: ~/%s is not read outside the sandbox either: %v\n%s", f.rel, err, ctl)
					}
				}
			})
		}
	}
}

// TestToolchainSecretsCarvedAtOnce: the landlock tier's cached view of a
// toolchain directory is carved again as soon as a credential file
// appears in it (the next Spec's view masks it, and the view is the
// caches' key), not after viewCacheTTL.
func TestToolchainSecretsCarvedAtOnce(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	lib := filepath.Join(home, "venv", "lib")
	if err := os.MkdirAll(filepath.Join(lib, "python3.12"), 0o755); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	s := &Spec{Dir: work, Writable: []string{work}, Env: []string{"VIRTUAL_ENV=" + filepath.Join(home, "venv")}}
	s.View = testViewEnv(s.Env)
	if v := runViewFor(nil, s, s.Writable, nil); !slices.Contains(v.view, lib) {
		t.Fatalf("control: %s is not in the view %q", lib, v.view)
	}
	if err := os.WriteFile(filepath.Join(lib, "credentials"), []byte("token\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.View = testViewEnv(s.Env)
	v := runViewFor(nil, s, s.Writable, nil)
	for _, p := range v.view {
		if view.Under(filepath.Join(lib, "credentials"), p) {
			t.Errorf("the view still reaches the new credential file through %s", p)
		}
	}
	if !slices.Contains(v.view, filepath.Join(lib, "python3.12")) {
		t.Errorf("the rest of %s left the view: %q", lib, v.view)
	}
}
