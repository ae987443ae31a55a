// Command schemagen writes the JSON Schemas generated from the Go
// declarations of the editor-facing surface into schema/: the ioh.*
// commands (lsp/api) as commands.schema.json and the editor settings
// (agent/config's declaration of a configuration layer) as
// settings.schema.json, and both with the enumerated settings' values as
// TypeScript for the VS Code extension (editors/vscode/src/api.generated.ts)
// and Lua for the Neovim plugin (editors/neovim/lua/ioh/api.lua).
// Run it from the module
// root after changing a declaration:
//
//	go run ./internal/schemagen
//
// TestCheckedInSchemasAreGenerated fails while a checked-in file differs
// from what the declarations generate.
//
// With -validate FILE it checks recorded editor traffic instead: FILE
// holds one JSON object a line, {command, arguments, result?}, as an
// editor's test recorded each workspace/executeCommand it sent (and the
// answer it got); each must fit schema/commands.schema.json, the result
// its command's declared result. The Neovim plugin's tests use it.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/ioh-lsp/ioh-lsp/internal/lsp/api"
)

// generated maps each file (from the module root) to its generator.
var generated = map[string]func() ([]byte, error){
	"schema/commands.schema.json":         api.CommandsSchema,
	"schema/settings.schema.json":         api.SettingsSchema,
	"editors/vscode/src/api.generated.ts": api.TypeScript,
	"editors/neovim/lua/ioh/api.lua":      api.Lua,
}

func main() {
	dir := flag.String("root", ".", "the module root the files are written under")
	check := flag.Bool("check", false, "only report the files that differ from what the declarations generate")
	validate := flag.String("validate", "", "check the recorded executeCommand traffic and settings in this JSON Lines file against the schemas")
	flag.Parse()
	if *validate != "" {
		n, err := validateTraffic(*validate)
		if err != nil {
			fmt.Fprintln(os.Stderr, "schemagen:", err)
			os.Exit(1)
		}
		fmt.Printf("%s: %d records fit schema/commands.schema.json and schema/settings.schema.json\n", *validate, n)
		return
	}
	stale, err := run(*dir, *check)
	if err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(2)
	}
	if *check && len(stale) > 0 {
		fmt.Fprintf(os.Stderr, "schemagen: %v differ from the declarations; run go run ./internal/schemagen\n", stale)
		os.Exit(1)
	}
}

// run writes (or with check, compares) every generated file under dir;
// it returns the names of those that differed.
func run(dir string, check bool) ([]string, error) {
	var stale []string
	for _, name := range sortedNames() {
		want, err := generated[name]()
		if err != nil {
			return nil, fmt.Errorf("generate %s: %w", name, err)
		}
		path := filepath.Join(dir, filepath.FromSlash(name))
		have, err := os.ReadFile(path)
		if err != nil && !os.IsNotExist(err) {
			return nil, err
		}
		if bytes.Equal(have, want) {
			continue
		}
		stale = append(stale, name)
		if check {
			continue
		}
		if err := writeAtomic(path, want); err != nil {
			return nil, err
		}
	}
	return stale, nil
}

func sortedNames() []string {
	return slices.Sorted(maps.Keys(generated))
}

// writeAtomic replaces path with data through a temporary file beside it,
// so a failed run leaves no half-written schema.
func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".schemagen-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr != nil || cerr != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, errors.Join(werr, cerr))
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
