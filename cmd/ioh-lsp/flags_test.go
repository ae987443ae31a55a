package main

import (
	"io"
	"strings"
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

func TestParseFlagsErrorIsOneLine(t *testing.T) {
	var out strings.Builder
	fs := newFlagSet("t", &out)
	fs.Bool("F", false, "fixed strings")
	_, err := parseFlags(fs, []string{"--nope"})
	if err == nil || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %q, want a one-line error", err)
	}
	if out.Len() != 0 {
		t.Fatalf("a parse error printed usage:\n%s", out.String())
	}
	_, err = parseFlags(fs, []string{"-h"})
	if _, ok := err.(helpRequested); !ok {
		t.Fatalf("-h: err = %v, want helpRequested", err)
	}
	if !strings.Contains(out.String(), "fixed strings") {
		t.Fatalf("-h did not print usage: %q", out.String())
	}
}
