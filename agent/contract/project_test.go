package contract

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestProjectTestCommand(t *testing.T) {
	for _, tc := range []struct {
		files []string
		want  []string
	}{
		{nil, nil},
		{[]string{"README.md"}, nil},
		{[]string{"go.mod"}, []string{"go", "test", "./..."}},
		{[]string{"Cargo.toml"}, []string{"cargo", "test", "--offline"}},
		{[]string{"package.json"}, []string{"npm", "test", "--silent"}},
		{[]string{"pytest.ini"}, []string{"python3", "-m", "pytest", "-q"}},
		{[]string{"setup.py"}, []string{"python3", "-m", "pytest", "-q"}},
		// A Go module with a JavaScript front end is tested as Go.
		{[]string{"package.json", "go.mod"}, []string{"go", "test", "./..."}},
	} {
		dir := t.TempDir()
		for _, f := range tc.files {
			if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if got := ProjectTestCommand(dir); !slices.Equal(got, tc.want) {
			t.Errorf("files %q: got %q, want %q", tc.files, got, tc.want)
		}
	}
}
