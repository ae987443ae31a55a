package review

import "testing"

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		rel  string
		want Group
	}{
		{"stats.go", Implementation},
		{"internal/x/y.py", Implementation},
		{"README.md", Implementation},
		{"stats_test.go", Tests},
		{"pkg/test_parse.py", Tests},
		{"pkg/parse_test.py", Tests},
		{"src/a.test.ts", Tests},
		{"src/a.spec.js", Tests},
		{"tests/fixtures.py", Tests},
		{"pkg/tests/x.go", Tests},
		{"web/__tests__/x.js", Tests},
		{"testdata/golden.txt", Tests},
		{"pkg/testdata/in.json", Tests}, // a test's data, not configuration
		{"go.mod", Config},
		{"go.sum", Config},
		{"config/app.yaml", Config},
		{"tsconfig.json", Config},
		{"Cargo.lock", Config},
		{"Makefile", RunsCode},
		{"sub/GNUmakefile", RunsCode},
		{"rules.mk", RunsCode},
		{"scripts/setup.sh", RunsCode},
		{"package.json", RunsCode}, // its scripts run: before Config
		{"web/package.json", RunsCode},
		{"pyproject.toml", RunsCode},
		{".github/workflows/ci.yml", RunsCode},
		{".GitHub/Workflows/ci.yml", RunsCode}, // case-insensitive file systems
		{".git/hooks/pre-commit", RunsCode},
		{".husky/pre-push", RunsCode},
		{".gitlab-ci.yml", RunsCode},
		{".vscode/tasks.json", RunsCode},
		{".vscode/settings.json", Config},
		{".envrc", RunsCode},
		{"Dockerfile", RunsCode},
		{"tests/run.sh", RunsCode}, // runs code beats tests
	} {
		if got := Of(tc.rel); got != tc.want {
			t.Errorf("Of(%q) = %s, want %s", tc.rel, got.Name, tc.want.Name)
		}
	}
}

func TestGroupsAreDistinctAndDescribed(t *testing.T) {
	seen := map[string]bool{}
	for _, g := range Groups() {
		if g.Name == "" || g.Label == "" || g.Why == "" {
			t.Errorf("group %+v lacks a name, label or reason", g)
		}
		if seen[g.Name] {
			t.Errorf("group name %q used twice", g.Name)
		}
		seen[g.Name] = true
	}
	if len(seen) != 5 {
		t.Errorf("%d groups, want 5", len(seen))
	}
}
