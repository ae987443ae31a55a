// Package replay is the provider that answers from a recorded cassette
// (docs/cassettes.md), so runs are reproducible offline, and the cassette format the
// recorder writes.
package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/regfile"
)

// Version is the cassette format version.
const Version = 1

// Cassette is a recording of model turns: Turns for the root agent,
// Children[goal] for a sub-agent spawned with that goal.
type Cassette struct {
	Version  int               `json:"version"`
	Turns    []Turn            `json:"turns"`
	Children map[string][]Turn `json:"children,omitempty"`
}

// Turn is one recorded model response.
type Turn struct {
	Text       string      `json:"text,omitempty"`
	ToolCalls  []Call      `json:"tool_calls,omitempty"`
	Usage      model.Usage `json:"usage"`
	StopReason string      `json:"stop_reason,omitempty"`
	// Provider and Model say who answered when the turn was recorded.
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	// CostUSD is the charge the provider reported for the turn when it
	// was recorded (OpenRouter's usage.cost); replay reports it again, so
	// a replayed run is charged what the recorded one was.
	CostUSD *float64 `json:"cost_usd,omitempty"`
}

// Call is one recorded tool call. ID is optional: replay synthesizes one.
type Call struct {
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// MaxSize bounds a cassette file.
const MaxSize = 64 << 20

// Load reads and checks a cassette file: a regular file (not a device or
// a FIFO, checked on the opened file) of at most MaxSize bytes. Its errors
// never quote the file's content, so naming a file that is not a cassette
// reveals nothing of it.
func Load(path string) (*Cassette, error) {
	data, err := regfile.Read(path, MaxSize)
	if err != nil {
		return nil, fmt.Errorf("read cassette: %w", err)
	}
	c, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("cassette %s: %w", path, err)
	}
	return c, nil
}

// Parse decodes and checks a cassette; unknown fields are errors. Decoding
// errors give the byte offset and what was expected, never the bytes
// found there.
func Parse(data []byte) (*Cassette, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var c Cassette
	if err := dec.Decode(&c); err != nil {
		return nil, decodeError(err, dec.InputOffset())
	}
	if dec.More() {
		return nil, errors.New("decode: trailing data after the cassette object")
	}
	if c.Version != Version {
		return nil, fmt.Errorf("unsupported version %d (want %d)", c.Version, Version)
	}
	if err := checkTurns("turns", c.Turns); err != nil {
		return nil, err
	}
	for goal, turns := range c.Children {
		if err := checkTurns(fmt.Sprintf("children[%q]", goal), turns); err != nil {
			return nil, err
		}
	}
	return &c, nil
}

// decodeError describes a decoding failure by position and expectation
// only: encoding/json's messages quote the offending character, number or
// key.
func decodeError(err error, offset int64) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Errorf("decode: not valid JSON at byte %d", syn.Offset)
	case errors.As(err, &typ):
		return fmt.Errorf("decode: a value of the wrong type at byte %d: want %s", typ.Offset, typ.Type)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("decode: the cassette ends before its object does")
	}
	return fmt.Errorf("decode: not a cassette object (an unknown field or a wrong shape near byte %d)", offset)
}

func checkTurns(where string, turns []Turn) error {
	for i, t := range turns {
		for j, call := range t.ToolCalls {
			if call.Name == "" {
				return fmt.Errorf("%s[%d].tool_calls[%d]: missing name", where, i, j)
			}
			if len(call.Arguments) > 0 {
				var obj map[string]json.RawMessage
				if err := json.Unmarshal(call.Arguments, &obj); err != nil || obj == nil {
					return fmt.Errorf("%s[%d].tool_calls[%d]: arguments must be a JSON object", where, i, j)
				}
			}
		}
	}
	return nil
}

// Save writes the cassette atomically: a temporary file in the same
// directory, synced, then renamed over path, so a crash leaves either the
// old cassette or the new one.
func (c *Cassette) Save(path string) error {
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("encode cassette: %w", err)
	}
	data = append(data, '\n')
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write cassette: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write cassette: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync cassette: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close cassette: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("replace cassette: %w", err)
	}
	return nil
}
