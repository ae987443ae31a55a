package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/regfile"
)

// Layer names, as Setting reports them.
const (
	LayerUser      = "user"
	LayerEditor    = "editor"
	LayerWorkspace = "workspace"
	LayerDefault   = "default"
)

// Setting is one key of the merged configuration and where its value
// came from: the highest layer that set it and was not ignored, else the
// default (Layer "default", Source ""; Value "" for a key with none). For
// a key whose layers add up (policy rules, sandbox paths, MCP servers)
// every honoured layer is named, "user+workspace", and its values joined
// with " + ".
type Setting struct {
	Key    string `json:"key"`    // dotted: model.provider, budget.cost_usd, sandbox.limits.wall
	Value  string `json:"value"`  // as written in that layer, in YAML flow form
	Layer  string `json:"layer"`  // user, editor, workspace or default
	Source string `json:"source"` // the file, or EditorSource
	// Ignored are the layers above whose value of the key was ignored,
	// each with the warning saying why and what fixes it.
	Ignored []IgnoredValue `json:"ignored,omitempty"`
}

// IgnoredValue is a layer's value that the merge ignored.
type IgnoredValue struct {
	Layer   string `json:"layer"`
	Value   string `json:"value"`
	Warning string `json:"warning"`
}

// Provenance loads the configuration as Load does and says, key by key,
// which layer each value comes from. A key a layer sets is ignored there
// when Load warned about it (or about a key above it: "mcp" covers
// mcp.servers.x.command), which is how an untrusted workspace's choices
// show. Settings are sorted by key.
func Provenance(o LoadOptions) (*Config, []Setting, error) {
	c, err := Load(o)
	if err != nil {
		return nil, nil, err
	}
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	userPath := o.UserPath
	if userPath == "" {
		userPath = UserPath(getenv)
	}
	type layer struct {
		name, source string
		keys         map[string]string
	}
	var layers []layer
	add := func(name, source string, data []byte) error {
		keys, err := flatKeys(data)
		if err != nil {
			return fmt.Errorf("%s: %w", source, err)
		}
		layers = append(layers, layer{name, source, keys})
		return nil
	}
	read := func(name, path string) error {
		data, err := regfile.Read(path, MaxSize)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read config: %w", err)
		}
		return add(name, path, data)
	}
	if err := read(LayerUser, userPath); err != nil {
		return nil, nil, err
	}
	if len(o.Editor) > 0 && string(o.Editor) != "null" {
		if err := add(LayerEditor, EditorSource, o.Editor); err != nil {
			return nil, nil, err
		}
	}
	if c.WorkspaceRoot != "" {
		if err := read(LayerWorkspace, WorkspacePath(c.WorkspaceRoot)); err != nil {
			return nil, nil, err
		}
	}
	all := map[string]bool{}
	for k := range Defaults() {
		all[k] = true
	}
	for _, l := range layers {
		for k := range l.keys {
			all[k] = true
		}
	}
	var out []Setting
	for k := range all {
		s := Setting{Key: k, Layer: LayerDefault}
		if d, ok := Defaults()[k]; ok {
			s.Value = fmt.Sprint(d)
		}
		for _, l := range layers { // low to high: the last one honoured wins
			v, ok := l.keys[k]
			if !ok {
				continue
			}
			if w := c.warningFor(l.source, k); w != "" {
				s.Ignored = append(s.Ignored, IgnoredValue{Layer: l.name, Value: v, Warning: w})
				continue
			}
			if k == "policy.rules" {
				// An untrusted layer keeps its rules but its allow rules.
				for _, w := range c.Warnings {
					if strings.HasPrefix(w, l.source+": policy rule ") {
						s.Ignored = append(s.Ignored, IgnoredValue{Layer: l.name, Value: strings.SplitN(strings.TrimPrefix(w, l.source+": policy rule "), " ignored: ", 2)[0], Warning: w})
					}
				}
			}
			if joined[k] && s.Layer != LayerDefault {
				s.Value, s.Layer, s.Source = s.Value+" + "+v, s.Layer+"+"+l.name, s.Source+", "+l.source
				continue
			}
			s.Value, s.Layer, s.Source = v, l.name, l.source
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return c, out, nil
}

// joined are the keys whose layers add up instead of the highest one
// replacing the others: each honoured layer's value applies.
var joined = map[string]bool{"policy.rules": true, "sandbox.masked": true, "sandbox.writable": true, "sandbox.readable": true, "mcp.servers": true}

// warningFor is Load's warning about key (or a key above it) in the layer
// read from source, "" when there is none.
func (c *Config) warningFor(source, key string) string {
	for _, w := range c.Warnings {
		rest, ok := strings.CutPrefix(w, source+": ")
		if !ok {
			continue
		}
		wk, _, ok := strings.Cut(rest, " ignored: ")
		if ok && (wk == key || strings.HasPrefix(key, wk+".")) {
			return w
		}
	}
	return ""
}

// flatKeys is a layer's keys, dotted down to the first value that is not
// a mapping (a list stays one key), each with its value in YAML flow form.
func flatKeys(data []byte) (map[string]string, error) {
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		if m, ok := v.(map[string]any); ok && len(m) > 0 {
			for k, x := range m {
				walk(strings.TrimPrefix(prefix+"."+k, "."), x)
			}
			return
		}
		if v == nil {
			return // written with no value: the key counts as omitted
		}
		if s, ok := v.(string); ok {
			out[prefix] = s
			return
		}
		b, err := json.Marshal(v)
		if err != nil {
			b = []byte(fmt.Sprint(v))
		}
		out[prefix] = string(b)
	}
	walk("", doc)
	return out, nil
}
