package config

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/regfile"
)

// MaxSize bounds a configuration file.
const MaxSize = 1 << 20

// Error is a configuration problem with its source (a file path or
// "editor settings") and 1-based line and column (0 when unknown).
type Error struct {
	Source    string
	Line, Col int
	Msg       string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", e.Source, e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Source, e.Msg)
}

// file is one configuration layer as written; nil pointers are keys the
// layer does not set.
type file struct {
	Model     *fileModel     `yaml:"model"`
	Approve   *string        `yaml:"approve"`
	Budget    *fileBudget    `yaml:"budget"`
	Policy    *filePolicy    `yaml:"policy"`
	Trusted   []string       `yaml:"trusted"`
	Prices    model.Prices   `yaml:"prices"`
	Sandbox   *fileSandbox   `yaml:"sandbox"`
	MCP       *fileMCP       `yaml:"mcp"`
	Telemetry *fileTelemetry `yaml:"telemetry"`
	Network   *fileNetwork   `yaml:"network"`
	Harness   *fileHarness   `yaml:"harness"`
}

type fileModel struct {
	Provider  *string             `yaml:"provider"`
	Name      *string             `yaml:"name"`
	BaseURL   *string             `yaml:"base_url"`
	APIKeyEnv *string             `yaml:"api_key_env"`
	Cassette  *string             `yaml:"cassette"`
	Fallback  []contract.Fallback `yaml:"fallback"`
	// FirstByteTimeout and IdleTimeout bound a provider call's stalls
	// (Go durations; docs/cli.md#timeouts).
	FirstByteTimeout *string `yaml:"first_byte_timeout"`
	IdleTimeout      *string `yaml:"idle_timeout"`
}

type fileBudget struct {
	Steps   *int     `yaml:"steps"`
	Tokens  *int64   `yaml:"tokens"`
	CostUSD *float64 `yaml:"cost_usd"`
	Wall    *string  `yaml:"wall"`
}

type filePolicy struct {
	Rules []policy.Rule `yaml:"rules"`
}

type fileSandbox struct {
	Masked   []string    `yaml:"masked"`
	Writable []string    `yaml:"writable"`
	Readable []string    `yaml:"readable"`
	Limits   *fileLimits `yaml:"limits"`
	Require  *string     `yaml:"require"`
}

type fileLimits struct {
	Wall   *string `yaml:"wall"`
	CPU    *string `yaml:"cpu"`
	Memory any     `yaml:"memory"` // bytes, or a string with a unit

	Procs  *int `yaml:"procs"`
	Files  *int `yaml:"files"`
	Output any  `yaml:"output"`
}

// parsed is a decoded layer with what is needed to place later errors.
type parsed struct {
	file
	source string
	ast    *ast.File
}

// readFile reads and decodes path; a missing file is no layer (nil). Only
// a regular file of at most MaxSize bytes is read (a workspace could ship
// .ioh/config.yaml as a symlink to /dev/zero or a FIFO).
func readFile(path string) (*parsed, error) {
	data, err := regfile.Read(path, MaxSize)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, nil
	case errors.Is(err, regfile.ErrTooLarge):
		return nil, &Error{Source: path, Msg: fmt.Sprintf("config is larger than %d bytes", MaxSize)}
	case err != nil:
		return nil, fmt.Errorf("read config: %w", err)
	}
	return decode(data, path)
}

// decode parses YAML (or JSON, which is YAML) strictly: unknown keys and
// wrong types are errors with line and column.
func decode(data []byte, source string) (*parsed, error) {
	if len(data) > MaxSize {
		return nil, &Error{Source: source, Msg: fmt.Sprintf("config is larger than %d bytes", MaxSize)}
	}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, positioned(source, err)
	}
	p := &parsed{source: source, ast: f}
	if e := fractions(f, source); e != nil {
		return nil, e
	}
	if err := yaml.UnmarshalWithOptions(data, &p.file, yaml.DisallowUnknownField()); err != nil {
		if e := typeError(f, source, err); e != nil {
			return nil, e
		}
		if e := unknownKey(f, source, err); e != nil {
			return nil, e
		}
		return nil, positioned(source, err)
	}
	return p, nil
}

func positioned(source string, err error) *Error {
	var ye yaml.Error
	if errors.As(err, &ye) {
		e := &Error{Source: source, Msg: ye.GetMessage()}
		if tok := ye.GetToken(); tok != nil && tok.Position != nil {
			e.Line, e.Col = tok.Position.Line, tok.Position.Column
		}
		return e
	}
	return &Error{Source: source, Msg: strings.TrimSpace(err.Error())}
}

// errAt builds an error placed at the node the YAML path names, or without
// a position when the node cannot be found.
func (p *parsed) errAt(ypath, format string, args ...any) *Error {
	e := &Error{Source: p.source, Msg: fmt.Sprintf(format, args...)}
	if p.ast == nil {
		return e
	}
	yp, err := yaml.PathString(ypath)
	if err != nil {
		return e
	}
	n, err := yp.FilterFile(p.ast)
	if err != nil || n == nil {
		return e
	}
	if tok := n.GetToken(); tok != nil && tok.Position != nil {
		e.Line, e.Col = tok.Position.Line, tok.Position.Column
	}
	return e
}

// duration converts an optional duration string.
func (p *parsed) duration(ypath string, s *string) (time.Duration, error) {
	if s == nil {
		return 0, nil
	}
	d, err := contract.ParseDuration(*s)
	if err != nil {
		return 0, p.errAt(ypath, "invalid duration %q: %v", *s, err)
	}
	return d, nil
}

// size converts an optional byte size: a number of bytes, or a string
// with a unit (B, KB, MB, GB, KiB, MiB, GiB).
func (p *parsed) size(ypath string, v any) (int64, error) {
	var s string
	switch x := v.(type) {
	case nil:
		return 0, nil
	case string:
		s = x
	case uint64, int64, int, float64:
		s = fmt.Sprint(x)
	default:
		return 0, p.errAt(ypath, "invalid byte size: want a number or a string like 256MiB")
	}
	n, err := ParseSize(s)
	if err != nil {
		return 0, p.errAt(ypath, "%v", err)
	}
	return n, nil
}

// ParseSize parses a byte size: "268435456", "256MiB", "1.5GB".
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}}
	mult := 1.0
	for _, u := range units {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 || f*mult > 1<<62 {
		return 0, fmt.Errorf("invalid byte size %q: want bytes or a number with a unit (256MiB)", s)
	}
	return int64(f * mult), nil
}
