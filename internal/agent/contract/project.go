package contract

import (
	"os"
	"path/filepath"
)

// ProjectTestCommand is the project's own test command, recognised from
// the manifest in dir (go.mod, Cargo.toml, package.json, then Python's
// pyproject.toml, setup.py or pytest.ini): the check of a contract built
// from a bare goal (the editor's "Ask agent", an ACP prompt). It is nil
// when the project type is unknown; such a run is marked unverified.
func ProjectTestCommand(dir string) []string {
	has := func(name string) bool {
		_, err := os.Stat(filepath.Join(dir, name))
		return err == nil
	}
	switch {
	case has("go.mod"):
		return []string{"go", "test", "./..."}
	case has("Cargo.toml"):
		return []string{"cargo", "test", "--offline"}
	case has("package.json"):
		return []string{"npm", "test", "--silent"}
	case has("pyproject.toml"), has("setup.py"), has("pytest.ini"):
		return []string{"python3", "-m", "pytest", "-q"}
	}
	return nil
}

// ProjectChecks is the verify.checks section, in the contract document's
// form, of a contract built from a bare goal in dir: one check named
// "tests" running ProjectTestCommand, or none when the project type is
// unknown (the run is then marked unverified).
func ProjectChecks(dir string) []map[string]any {
	argv := ProjectTestCommand(dir)
	if argv == nil {
		return nil
	}
	return []map[string]any{{"name": "tests", "run": argv}}
}
