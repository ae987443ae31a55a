package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/config"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/provider"
	"github.com/ioh-lsp/ioh-lsp/internal/wire"
)

// keyProviders are the providers init recognises by their key variable,
// in the order it prefers them when several keys are set.
var keyProviders = []string{provider.KindAnthropic, provider.KindOpenAI, provider.KindOpenRouter}

// starterTask is the task file init writes into a project.
const starterTask = ".ioh/tasks/check.yaml"

// cmdInit writes the user config (the provider picked from the API keys in
// the environment) and, in a project, a starter task file running the
// checks it detects. Nothing existing is overwritten without --force,
// which keeps the old file as FILE.bak.
func cmdInit(ctx context.Context, env *cliEnv, args []string) int {
	fs := newFlagSet("init", env.stderr)
	force := fs.Bool("force", false, "replace existing files (each is kept as FILE.bak first)")
	pick := fs.String("provider", "", "the provider `P` to configure: anthropic, openai or openrouter (default: the first whose key is in the environment)")
	pos, err := parseFlags(fs, args)
	if err == nil {
		err = wantArgs(pos, 0, 0)
	}
	if err == nil && *pick != "" && provider.DefaultKeyEnv[*pick] == "" {
		err = fmt.Errorf("bad --provider %q (want %s)", *pick, strings.Join(keyProviders, ", "))
	}
	if err != nil {
		return usageError(env, "init", err)
	}
	userPath := config.UserPath(env.getenv)
	chosen, note := chooseProvider(env.getenv, *pick)
	code := exitOK
	if err := writeNew(userPath, userConfigText(chosen), *force); err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp init: %v\n", err)
		code = exitFailed
	} else {
		fmt.Fprintf(env.stderr, "wrote %s: %s\n", userPath, note)
	}
	cwd, _ := os.Getwd()
	root := wire.FindRoot(cwd, "")
	if root == "" {
		fmt.Fprintf(env.stderr, "no task file written: %s is not inside a git repository (run ioh-lsp init in a project, or git init it first)\n", cwd)
		return code
	}
	if err := config.CheckWorkspace(root, env.getenv); err != nil {
		fmt.Fprintf(env.stderr, "no task file written: %v\n", err)
		return code
	}
	taskPath := filepath.Join(root, filepath.FromSlash(starterTask))
	task, what, err := starterTaskText(root)
	if err == nil {
		err = writeNew(taskPath, task, *force)
	}
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp init: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(env.stderr, "wrote %s: %s\n", taskPath, what)
	fmt.Fprintf(env.stderr, "next: edit its goal, then ioh-lsp run %s (or ioh-lsp ask \"GOAL\" without a task file); ioh-lsp config shows what applies\n", taskPath)
	return code
}

// chooseProvider is the provider to configure ("" for none) and a note
// saying why.
func chooseProvider(getenv func(string) string, pick string) (string, string) {
	if pick != "" {
		v := provider.DefaultKeyEnv[pick]
		if getenv(v) == "" {
			return pick, fmt.Sprintf("provider %s as asked; export %s before running", pick, v)
		}
		return pick, fmt.Sprintf("provider %s as asked, its key from %s", pick, v)
	}
	var found []string
	for _, p := range keyProviders {
		if getenv(provider.DefaultKeyEnv[p]) != "" {
			found = append(found, p)
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Sprintf("a commented template: no %s, %s or %s is set; uncomment a provider and export its key (or rerun with it exported)",
			provider.DefaultKeyEnv[keyProviders[0]], provider.DefaultKeyEnv[keyProviders[1]], provider.DefaultKeyEnv[keyProviders[2]])
	case 1:
		return found[0], fmt.Sprintf("provider %s, because %s is set", found[0], provider.DefaultKeyEnv[found[0]])
	}
	return found[0], fmt.Sprintf("provider %s, because %s is set (also set: %s; choose with --provider)", found[0], provider.DefaultKeyEnv[found[0]], strings.Join(found[1:], ", "))
}

// userConfigText is the user config for provider p ("" for the template
// naming the choices).
func userConfigText(p string) string {
	var b strings.Builder
	b.WriteString("# ioh-lsp user configuration (docs/policy.md#configuration).\n")
	b.WriteString("# Only this file may trust a workspace: list project roots under `trusted:`\n")
	b.WriteString("# to let their .ioh/config.yaml and task files choose models and widen limits.\n")
	if p == "" {
		b.WriteString("#\n# Uncomment one provider; its key is read from the variable named.\n")
		b.WriteString("# model:\n")
		for _, k := range keyProviders {
			fmt.Fprintf(&b, "#   provider: %s   # key in %s, model %s\n", k, provider.DefaultKeyEnv[k], provider.DefaultModels[k])
		}
		b.WriteString("#   # a local server (Ollama, llama.cpp, vLLM): provider: openai-compatible, base_url: http://localhost:11434/v1, name: MODEL\n")
	} else {
		fmt.Fprintf(&b, "model:\n  provider: %s\n  name: %s\n", p, provider.DefaultModels[p])
	}
	b.WriteString("# trusted:\n#   - ~/src/my-project\n")
	return b.String()
}

// starterTaskText is the starter task file for the project at root and a
// note on the checks it runs.
func starterTaskText(root string) (string, string, error) {
	doc := yaml.MapSlice{{Key: "version", Value: 1}, {Key: "goal", Value: "describe the change you want here"}}
	what := "no checks detected (no go.mod, Cargo.toml, package.json, pyproject.toml, setup.py or pytest.ini): add one under verify.checks, or the run is unverified"
	if checks := contract.ProjectChecks(root); len(checks) > 0 {
		doc = append(doc, yaml.MapItem{Key: "verify", Value: map[string]any{"checks": checks}})
		what = fmt.Sprintf("runs %s to verify", strings.Join(contract.ProjectTestCommand(root), " "))
		if warn := npmTestMissing(root); warn != "" {
			what += "; " + warn
		}
	}
	out, err := yaml.MarshalWithOptions(doc, yaml.IndentSequence(true))
	if err != nil {
		return "", "", fmt.Errorf("encode the starter task: %w", err)
	}
	head := "# yaml-language-server: $schema=https://github.com/ioh-lsp/ioh-lsp/schema/task.schema.json\n# A task contract (docs/contract.md): say what to do in goal; verify.checks prove it.\n"
	return head + string(out), what, nil
}

// writeNew writes data to path, creating its directory. An existing file
// is refused unless force, which first keeps it as path.bak.
func writeNew(path, data string, force bool) error {
	if _, err := os.Lstat(path); err == nil {
		if !force {
			return fmt.Errorf("%s exists; nothing was changed there (rerun with --force to replace it, keeping the old one as %s.bak)", path, path)
		}
		if err := os.Rename(path, path+".bak"); err != nil {
			return fmt.Errorf("keep %s as .bak: %w", path, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("check %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.WriteString(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// npmTestMissing says what is wrong with a package.json whose test script
// the starter check runs ("" when it has a real one, or is no npm project).
func npmTestMissing(root string) string {
	if contract.ProjectTestCommand(root)[0] != "npm" {
		return ""
	}
	data, err := os.ReadFile(filepath.Join(root, "package.json"))
	if err != nil {
		return ""
	}
	var pkg struct {
		Scripts map[string]string `json:"scripts"`
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		return fmt.Sprintf("package.json does not parse (%v), so npm test will fail: fix it", err)
	}
	t := pkg.Scripts["test"]
	switch {
	case t == "":
		return "package.json has no scripts.test, so npm test will fail: add one, or change the check"
	case strings.Contains(t, "no test specified"):
		return "package.json's scripts.test is npm's placeholder, which fails: replace it, or change the check"
	}
	return ""
}
