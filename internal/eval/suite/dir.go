package suite

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
)

// findContract is the one *.ioh.yaml (or .ioh/tasks/*.yaml) at dir's top.
func findContract(dir string) (string, error) {
	found, _ := filepath.Glob(filepath.Join(dir, "*.ioh.yaml"))
	if len(found) == 0 {
		found, _ = filepath.Glob(filepath.Join(dir, ".ioh", "tasks", "*.yaml"))
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("no task contract (*.ioh.yaml) in %s: add one or name it with `contract`", dir)
	case 1:
		return found[0], nil
	}
	sort.Strings(found)
	return "", fmt.Errorf("%d task contracts in %s (%s, …): name one with `contract`", len(found), dir, filepath.Base(found[0]))
}

// loadDir makes a suite of a directory's task subdirectories.
func loadDir(dir string) (*Suite, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("suite %s: %w", dir, err)
	}
	s := &Suite{Path: dir, Name: filepath.Base(dir), Variants: []Variant{{Name: "default"}}}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		c, err := findContract(sub)
		if err != nil {
			continue // not a task directory
		}
		if !validID(e.Name()) {
			return nil, &Error{Source: sub, Msg: fmt.Sprintf("task directory name %q: use letters, digits, '-', '_' and '.'", e.Name())}
		}
		if _, err := contract.Load(c); err != nil {
			return nil, err
		}
		t := Task{ID: e.Name(), Dir: sub, Contract: filepath.Base(c), Inside: true}
		if rel, err := filepath.Rel(sub, c); err == nil {
			t.Contract = rel
		}
		if cas := filepath.Join(sub, "cassette.json"); fileExists(cas) {
			t.Cassette = cas
		}
		s.Tasks = append(s.Tasks, t)
	}
	if len(s.Tasks) == 0 {
		return nil, &Error{Source: dir, Msg: "no " + FileName + " and no task directories (a subdirectory with one *.ioh.yaml): nothing to run"}
	}
	return s, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
