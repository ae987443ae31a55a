package main

import (
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseFlagsInterleaved(t *testing.T) {
	tests := []struct {
		args    []string
		wantPos []string
		wantF   bool
		wantG   []string
		wantErr bool
	}{
		{args: []string{"pat", "dir"}, wantPos: []string{"pat", "dir"}},
		{args: []string{"-F", "pat", "dir"}, wantPos: []string{"pat", "dir"}, wantF: true},
		{args: []string{"pat", "-F", "dir"}, wantPos: []string{"pat", "dir"}, wantF: true},
		{args: []string{"pat", "dir", "-F"}, wantPos: []string{"pat", "dir"}, wantF: true},
		{args: []string{"-F", "--", "-x", "dir"}, wantPos: []string{"-x", "dir"}, wantF: true},
		{args: []string{"--glob", "*.go", "p", "--glob=*.md"}, wantPos: []string{"p"}, wantG: []string{"*.go", "*.md"}},
		{args: []string{"p", "--", "-F"}, wantPos: []string{"p", "-F"}},
		{args: []string{"--nope"}, wantErr: true},
	}
	for _, tt := range tests {
		fs := newFlagSet("t", io.Discard)
		f := fs.Bool("F", false, "")
		var g stringList
		fs.Var(&g, "glob", "")
		pos, err := parseFlags(fs, tt.args)
		if (err != nil) != tt.wantErr {
			t.Fatalf("%q: err = %v, wantErr %v", tt.args, err, tt.wantErr)
		}
		if err != nil {
			continue
		}
		if diff := cmp.Diff(pos, tt.wantPos); diff != "" {
			t.Errorf("%q: positional (-got +want):\n%s", tt.args, diff)
		}
		if *f != tt.wantF {
			t.Errorf("%q: -F = %v, want %v", tt.args, *f, tt.wantF)
		}
		if diff := cmp.Diff([]string(g), tt.wantG); diff != "" {
			t.Errorf("%q: --glob (-got +want):\n%s", tt.args, diff)
		}
	}
}
