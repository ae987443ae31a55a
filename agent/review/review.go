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
	// TouchesChecks holds the files through which a change touches its
	// own checks (agent/verify decides which: verify.Report's
	// TouchesChecksFiles); it is never the result of Of.
	TouchesChecks = Group{Name: "touches-checks", Label: "Changes its own checks: review carefully", Careful: true,
		Why: "the change touches what verifies it"}
)

// Groups lists every group in review order.
func Groups() []Group { return []Group{Implementation, Tests, Config, RunsCode, TouchesChecks} }

// runsCodeDirs are directories whose files run on the user's machine
// (CI definitions, git hooks), lower-case, with a trailing slash.
var runsCodeDirs = []string{".github/workflows/", ".circleci/", ".git/hooks/", ".husky/"}

// runsCodeFiles are workspace-relative paths (lower-case) that run code.
var runsCodeFiles = map[string]bool{
	".gitlab-ci.yml": true, ".vscode/tasks.json": true, ".vscode/launch.json": true,
}

// runsCodeNames are base names, in any directory, of build scripts,
// manifests whose scripts run, and tool configuration that runs code.
var runsCodeNames = map[string]bool{
	"Makefile": true, "GNUmakefile": true, "package.json": true, "setup.py": true,
	"pyproject.toml": true, "build.rs": true, "build.gradle": true, "build.gradle.kts": true,
	"pom.xml": true, "Jenkinsfile": true, "Dockerfile": true, "justfile": true,
	"Taskfile.yml": true, "Rakefile": true, ".envrc": true, ".pre-commit-config.yaml": true,
}

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
	base, lower := path.Base(rel), strings.ToLower(rel)
	for _, d := range runsCodeDirs {
		if strings.HasPrefix(lower, d) {
			return true
		}
	}
	return runsCodeFiles[lower] || runsCodeNames[base] ||
		strings.HasSuffix(base, ".mk") || strings.HasSuffix(base, ".sh")
}

func isTest(rel string) bool {
	base, lower := path.Base(rel), strings.ToLower(rel)
	return strings.HasSuffix(base, "_test.go") || strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py") ||
		strings.Contains(base, ".test.") || strings.Contains(base, ".spec.") ||
		strings.HasPrefix(lower, "test/") || strings.HasPrefix(lower, "tests/") || strings.Contains(lower, "/tests/") ||
		strings.Contains(lower, "__tests__/") || strings.Contains(lower, "/testdata/") || strings.HasPrefix(lower, "testdata/")
}
