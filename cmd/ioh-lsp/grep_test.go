package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGrepFindCommands(t *testing.T) {
	dir := t.TempDir()
	for p, content := range map[string]string{
		"a.go":          "package a\nfunc Parse() {}\n",
		"sub/b.go":      "x := -x\n",
		"sub/c_test.go": "Parse\n",
		".ignore":       "skip/\n",
		"skip/s.go":     "Parse\n",
	} {
		abs := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		args     []string
		wantOut  string
		wantCode int
	}{
		{args: []string{"grep", "Parse", dir}, wantOut: "a.go:2:func Parse() {}\nsub/c_test.go:1:Parse\n"},
		{args: []string{"grep", dir, "--glob", "!*_test.go", "-e"}, wantCode: exitUsage},
		{args: []string{"grep", "-F", "--", "-x", dir}, wantOut: "sub/b.go:1:x := -x\n"},
		{args: []string{"grep", "parse", dir, "-i", "--glob", "*.go", "--glob", "!*_test.go"}, wantOut: "a.go:2:func Parse() {}\n"},
		{args: []string{"grep", "Parse", dir, "--max", "1"}, wantOut: "a.go:2:func Parse() {}\n"},
		{args: []string{"grep", "Parse", filepath.Join(dir, "a.go")}, wantOut: "a.go:2:func Parse() {}\n"},
		{args: []string{"grep", "nothing-here", dir}, wantCode: exitFailed},
		{args: []string{"grep", "(", dir}, wantCode: exitUsage},
		{args: []string{"grep", "x", filepath.Join(dir, "missing")}, wantCode: exitUsage},
		{args: []string{"grep"}, wantCode: exitUsage},
		{args: []string{"grep", "x", dir, "--max", "-1"}, wantCode: exitUsage},
		{args: []string{"find", "**/*.go", dir}, wantOut: "a.go\nsub/b.go\nsub/c_test.go\n"},
		{args: []string{"find", "sub/*_test.go", dir}, wantOut: "sub/c_test.go\n"},
		{args: []string{"find", "*.rs", dir}, wantCode: exitFailed},
		{args: []string{"find", "[", dir}, wantCode: exitUsage},
		{args: []string{"find"}, wantCode: exitUsage},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			env := &cliEnv{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
			code := dispatch(context.Background(), env, tt.args)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d (stderr %q)", code, tt.wantCode, stderr.String())
			}
			if diff := cmp.Diff(stdout.String(), tt.wantOut); diff != "" {
				t.Errorf("stdout (-got +want):\n%s", diff)
			}
			if code == exitUsage {
				// The error's line; a missing argument adds the usage line.
				lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
				if !strings.HasPrefix(lines[0], "ioh-lsp "+tt.args[0]+": ") || (len(lines) > 1 && !strings.HasPrefix(lines[1], "usage: ioh-lsp "+tt.args[0]+" ")) {
					t.Errorf("no one-line error on stderr: %q", stderr.String())
				}
			}
		})
	}
}
