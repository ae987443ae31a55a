// Package review sorts the files of a change into the groups a reviewer
// sees them in: the implementation, its tests, configuration, files that
// run code on the user's machine later (build scripts, CI, hooks), and
// the files through which a change touches its own checks. A front end
// (the language server's change annotations, a terminal listing) shows
// each group with its label and why it matters; it does not classify
// files itself.
package review

import (
	"path"
	"strings"
	"sync"
)

// Group is one review group.
type Group struct {
	// Name identifies the group ("tests"); front ends build their own
	// identifiers from it.
	Name string
	// Label is the group's title.
	Label string
	// Why says what the group holds and why a reviewer cares.
	Why string
	// Careful marks a group to review with particular care.
	Careful bool
}

// The groups, in the order a reviewer sees them.
var (
	Implementation = Group{Name: "implementation", Label: "Implementation",
		Why: "source changes that make the goal true"}
	Tests = Group{Name: "tests", Label: "Tests",
		Why: "tests added or changed to prove the change"}
	Config = Group{Name: "config", Label: "Configuration",
		Why: "configuration and dependency files"}
	RunsCode = Group{Name: "runs-code", Label: "Runs code on your machine: review carefully", Careful: true,
		Why: "build scripts, CI configuration, package manifests, editor tasks or git hooks: these run code on your machine later"}
	// Introspects holds code under test (not test files) whose added
	// lines read the environment, the arguments, the host name or the
	// home and temporary directories: such code can pass in the sandbox,
	// whose HOME, TMPDIR and paths differ, and fail on the user's
	// machine, or the reverse.
	Introspects = Group{Name: "introspects", Label: "Reads its environment: review carefully", Careful: true,
		Why: "code that now reads environment variables, arguments, the host name or the home and temporary directories: it may pass in the sandbox and behave otherwise on your machine"}
	// TouchesChecks holds the files through which a change touches its
	// own checks (agent/verify decides which: verify.Report's
	// TouchesChecksFiles); it is never the result of Of.
	TouchesChecks = Group{Name: "touches-checks", Label: "Changes its own checks: review carefully", Careful: true,
		Why: "the change touches what verifies it"}
)

// Groups lists every group in review order.
func Groups() []Group {
	return []Group{Implementation, Tests, Config, RunsCode, Introspects, TouchesChecks}
}

// runsCodeDirs are directories whose files run on the user's machine
// later (CI definitions, git hooks, dev containers, IDE run
// configurations), lower-case, with a trailing slash. A workspace's own
// hooks directory (git's configured core.hooksPath) and the other paths
// git runs from are added per workspace (Check).
var runsCodeDirs = []string{
	".github/workflows/", ".github/actions/", ".circleci/", ".buildkite/", ".git/hooks/", ".husky/", ".githooks/",
	".devcontainer/", ".idea/runconfigurations/", ".run/", ".vscode/",
}

// runsCodeFiles are workspace-relative paths (lower-case) that run code.
var runsCodeFiles = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		".gitlab-ci.yml": true, ".travis.yml": true, "azure-pipelines.yml": true, "bitbucket-pipelines.yml": true,
		".drone.yml": true, "appveyor.yml": true, ".idea/workspace.xml": true,
		".cargo/config.toml": true, ".cargo/config": true, // target runners, build scripts' rustflags
	}
})

// runsCodeNames are base names (lower-case), in any directory, of build
// scripts, manifests whose scripts run, task runners, and tool and editor
// configuration that runs code when a person works in the directory.
var runsCodeNames = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"makefile": true, "gnumakefile": true, "package.json": true, "setup.py": true, "setup.cfg": true,
		"pyproject.toml": true, "build.rs": true, "build.gradle": true, "build.gradle.kts": true,
		"settings.gradle": true, "settings.gradle.kts": true, "gradlew": true, "pom.xml": true,
		"jenkinsfile": true, "dockerfile": true, "containerfile": true, "docker-compose.yml": true,
		"docker-compose.yaml": true, "compose.yml": true, "compose.yaml": true, "justfile": true,
		"taskfile.yml": true, "taskfile.yaml": true, "rakefile": true, "gemfile": true, "cmakelists.txt": true,
		"meson.build": true, "build.bazel": true, "workspace": true, "workspace.bazel": true, ".bazelrc": true,
		"vagrantfile": true, "flake.nix": true, "shell.nix": true, "default.nix": true, "noxfile.py": true,
		"tox.ini": true, "conftest.py": true, "tasks.py": true, "fabfile.py": true, "procfile": true,
		".envrc": true, ".pre-commit-config.yaml": true, "lefthook.yml": true, ".lefthook.yml": true,
		".huskyrc": true, ".lintstagedrc": true, "mise.toml": true, ".mise.toml": true, ".yarnrc.yml": true,
		".npmrc": true, ".pnpmfile.cjs": true, ".nvim.lua": true, ".nvimrc": true, ".exrc": true,
	}
})

// configExts are the extensions of configuration and dependency files.
var configExts = map[string]bool{
	".yaml": true, ".yml": true, ".json": true, ".toml": true, ".ini": true,
	".cfg": true, ".conf": true, ".mod": true, ".sum": true, ".lock": true,
}

// Of returns the group of the file at rel, a workspace-relative slash
// path: RunsCode before Tests before Config; everything else is
// Implementation.
func Of(rel string) Group {
	switch {
	case runsCode(rel):
		return RunsCode
	case isTest(rel):
		return Tests
	case configExts[path.Ext(path.Base(rel))]:
		return Config
	}
	return Implementation
}

func runsCode(rel string) bool {
	lower := strings.ToLower(rel)
	base := path.Base(lower)
	for _, d := range runsCodeDirs {
		if strings.HasPrefix(lower, d) {
			return true
		}
	}
	return runsCodeFiles()[lower] || runsCodeNames()[base] ||
		strings.HasSuffix(base, ".mk") || strings.HasSuffix(base, ".sh")
}

func isTest(rel string) bool {
	base, lower := path.Base(rel), strings.ToLower(rel)
	return strings.HasSuffix(base, "_test.go") || strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py") ||
		strings.Contains(base, ".test.") || strings.Contains(base, ".spec.") ||
		strings.HasPrefix(lower, "test/") || strings.HasPrefix(lower, "tests/") || strings.Contains(lower, "/tests/") ||
		strings.Contains(lower, "__tests__/") || strings.Contains(lower, "/testdata/") || strings.HasPrefix(lower, "testdata/")
}
