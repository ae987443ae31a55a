package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"reflect"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/parser"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/regfile"
)

// MaxSize bounds a contract file.
const MaxSize = 1 << 20

var errNegative = errors.New("duration must not be negative")

// Load reads, validates and fills the defaults of the contract at path.
// A relative model.cassette stays as written: it is resolved once, against
// the contract's directory and confined to the workspace, when the run is
// prepared (config.PrepareContract).
func Load(path string) (*Contract, error) {
	data, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	c, err := Parse(data, path)
	if err != nil {
		return nil, err
	}
	c.Path = path
	return c, nil
}

// ReadFile reads a task file: a regular file (not a device or a FIFO,
// checked on the opened file, which is opened without blocking) of at
// most MaxSize bytes. Errors never quote the file's content.
func ReadFile(path string) ([]byte, error) {
	data, err := regfile.Read(path, MaxSize)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("load contract %s: %w", path, ErrNotFound)
	case errors.Is(err, regfile.ErrTooLarge):
		return nil, &Error{File: path, Msg: fmt.Sprintf("contract is larger than %d bytes", MaxSize)}
	case err != nil:
		return nil, fmt.Errorf("load contract: %w", err)
	}
	return data, nil
}

// Parse validates a YAML or JSON contract against schema/task.schema.json
// and returns it with defaults filled (the budget fields it filled are
// recorded in Contract.Omitted). name labels errors (usually the file
// path). Every failure is a *Error naming the line, column and field.
func Parse(data []byte, name string) (*Contract, error) {
	fail := func(e *Error) error {
		e.File = name
		return e
	}
	if len(data) > MaxSize {
		return nil, fail(&Error{Msg: fmt.Sprintf("contract is larger than %d bytes", MaxSize)})
	}
	// Editors on Windows may save a byte-order mark; it is not content.
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	if e := checkNesting(data); e != nil {
		return nil, fail(e)
	}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, fail(syntaxError(err))
	}
	var docs int
	var body = f.Docs
	for _, d := range body {
		if d != nil && d.Body != nil {
			docs++
		}
	}
	switch {
	case docs == 0:
		return nil, fail(&Error{Msg: "empty contract: want a mapping with at least a goal"})
	case docs > 1:
		p := nodePos(body[len(body)-1].Body)
		return nil, fail(&Error{Line: p.line, Col: p.col, Msg: "want one YAML document, found several"})
	}
	var t *tree
	for _, d := range body {
		if d != nil && d.Body != nil {
			var berr *Error
			if t, berr = build(d.Body); berr != nil {
				return nil, fail(berr)
			}
		}
	}
	verr, err := validate(t)
	if err != nil {
		return nil, err
	}
	if verr != nil {
		return nil, fail(verr)
	}
	c, cerr := convert(t)
	if cerr != nil {
		return nil, fail(cerr)
	}
	return c, nil
}

func syntaxError(err error) *Error {
	var ye yaml.Error
	if errors.As(err, &ye) {
		e := &Error{Msg: "syntax error: " + ye.GetMessage()}
		if tok := ye.GetToken(); tok != nil && tok.Position != nil {
			e.Line, e.Col = tok.Position.Line, tok.Position.Column
		}
		return e
	}
	return &Error{Msg: "syntax error: " + strings.TrimSpace(err.Error())}
}

// raw mirrors the schema with pointers where omitted differs from zero.
type raw struct {
	Version     *int            `json:"version"`
	Goal        string          `json:"goal"`
	Context     []string        `json:"context"`
	Constraints []string        `json:"constraints"`
	Scope       Scope           `json:"scope"`
	Verify      json.RawMessage `json:"verify"`
	Budget      struct {
		Steps   *int     `json:"steps"`
		Tokens  *int64   `json:"tokens"`
		CostUSD *float64 `json:"cost_usd"`
		Wall    *string  `json:"wall"`
	} `json:"budget"`
	Retry struct {
		Max  *int    `json:"max"`
		Base *string `json:"base"`
		Cap  *string `json:"cap"`
	} `json:"retry"`
	Model  Model `json:"model"`
	Policy struct {
		Rules []policy.Rule `json:"rules"`
	} `json:"policy"`
	Agents struct {
		MaxTotal      *int `json:"max_total"`
		MaxDepth      *int `json:"max_depth"`
		MaxConcurrent *int `json:"max_concurrent"`
	} `json:"agents"`
}

type rawVerify struct {
	Checks   []rawCheck `json:"checks"`
	RedGreen bool       `json:"red_green"`
	Protect  []string   `json:"protect"`
}

type rawCheck struct {
	Name       string   `json:"name"`
	Run        []string `json:"run"`
	Shell      string   `json:"shell"`
	ExpectExit int      `json:"expect_exit"`
	Timeout    *string  `json:"timeout"`
	Network    bool     `json:"network"`
	Report     string   `json:"report"`
}

// convert decodes a schema-valid tree into a Contract, checks what the
// schema cannot express, and fills defaults.
func convert(t *tree) (*Contract, *Error) {
	buf, err := json.Marshal(t.value)
	if err != nil {
		return nil, &Error{Msg: fmt.Sprintf("encode contract: %v", err)}
	}
	var r raw
	if err := json.Unmarshal(buf, &r); err != nil {
		return nil, decodeError(t, "", err)
	}
	c := &Contract{
		Version:     DefaultVersion,
		Goal:        r.Goal,
		Context:     r.Context,
		Constraints: r.Constraints,
		Scope:       r.Scope,
		Budget:      DefaultBudget(),
		Retry:       DefaultRetry(),
		Model:       r.Model,
		Policy:      Policy{Rules: r.Policy.Rules},
		Agents:      DefaultAgents(),
	}
	if r.Version != nil {
		c.Version = *r.Version
	}
	dur := func(ptr string, s *string, into *time.Duration) *Error {
		if s == nil {
			return nil
		}
		d, err := ParseDuration(*s)
		if err != nil {
			p := t.values[ptr]
			return &Error{Line: p.line, Col: p.col, Field: fieldOf(ptr), Msg: fmt.Sprintf("invalid duration %q: %v", *s, err)}
		}
		*into = d
		return nil
	}
	if e := convertVerify(t, r.Verify, &c.Verify, dur); e != nil {
		return nil, e
	}
	b := r.Budget
	c.Omitted = BudgetOmitted{Steps: b.Steps == nil, Tokens: b.Tokens == nil, CostUSD: b.CostUSD == nil, Wall: b.Wall == nil}
	setIf(&c.Budget.Steps, b.Steps)
	setIf(&c.Budget.Tokens, b.Tokens)
	setIf(&c.Budget.CostUSD, b.CostUSD)
	if e := dur("/budget/wall", b.Wall, &c.Budget.Wall); e != nil {
		return nil, e
	}
	setIf(&c.Retry.Max, r.Retry.Max)
	if e := dur("/retry/base", r.Retry.Base, &c.Retry.Base); e != nil {
		return nil, e
	}
	if e := dur("/retry/cap", r.Retry.Cap, &c.Retry.Cap); e != nil {
		return nil, e
	}
	if c.Retry.Cap < c.Retry.Base {
		p := t.values["/retry/cap"]
		if r.Retry.Cap == nil {
			p = t.values["/retry/base"]
		}
		return nil, &Error{Line: p.line, Col: p.col, Field: "retry.cap", Msg: fmt.Sprintf("cap %s is shorter than base %s", c.Retry.Cap, c.Retry.Base)}
	}
	setIf(&c.Agents.MaxTotal, r.Agents.MaxTotal)
	setIf(&c.Agents.MaxDepth, r.Agents.MaxDepth)
	setIf(&c.Agents.MaxConcurrent, r.Agents.MaxConcurrent)
	if e := checkGlobs(t, c); e != nil {
		return nil, e
	}
	return c, nil
}

func setIf[T any](dst *T, src *T) {
	if src != nil {
		*dst = *src
	}
}

func convertVerify(t *tree, msg json.RawMessage, out *Verify, dur func(string, *string, *time.Duration) *Error) *Error {
	if len(msg) == 0 || string(msg) == "null" {
		return nil
	}
	var rv rawVerify
	base := "/verify/checks"
	if msg[0] == '[' {
		base = "/verify"
		if err := json.Unmarshal(msg, &rv.Checks); err != nil {
			return decodeError(t, "/verify", err)
		}
	} else if err := json.Unmarshal(msg, &rv); err != nil {
		return decodeError(t, "/verify", err)
	}
	out.RedGreen = rv.RedGreen
	out.Protect = rv.Protect
	for i, rc := range rv.Checks {
		ptr := fmt.Sprintf("%s/%d", base, i)
		if (len(rc.Run) == 0) == (rc.Shell == "") {
			p := t.values[ptr]
			return &Error{Line: p.line, Col: p.col, Field: fieldOf(ptr), Msg: "want exactly one of run and shell"}
		}
		ck := Check{Name: rc.Name, Run: rc.Run, Shell: rc.Shell, ExpectExit: rc.ExpectExit, Timeout: DefaultCheckTimeout, Network: rc.Network, Report: rc.Report}
		if msg := checkReport(rc.Report); msg != "" {
			p := t.values[ptr+"/report"]
			return &Error{Line: p.line, Col: p.col, Field: fieldOf(ptr + "/report"), Msg: msg}
		}
		if e := dur(ptr+"/timeout", rc.Timeout, &ck.Timeout); e != nil {
			return e
		}
		if ck.Name == "" {
			ck.Name = ck.Shell
			if len(ck.Run) > 0 {
				ck.Name = strings.Join(ck.Run, " ")
			}
		}
		out.Checks = append(out.Checks, ck)
	}
	return nil
}

// checkReport returns what is wrong with a check's report key, or "": it
// is "", "none", "tap" or "junit:PATH" with PATH relative and inside the
// workspace.
func checkReport(r string) string {
	switch r {
	case "", "none", "tap":
		return ""
	}
	p, ok := strings.CutPrefix(r, "junit:")
	if !ok {
		return fmt.Sprintf("report %q: want junit:PATH, tap or none", r)
	}
	c := path.Clean(p)
	if p == "" || path.IsAbs(p) || c == "." || c == ".." || strings.HasPrefix(c, "../") || strings.ContainsAny(p, "\\\x00\n") {
		return fmt.Sprintf("report %q: the path must be relative and inside the workspace", r)
	}
	if err := policy.CheckPathGlob(p); err != nil {
		return fmt.Sprintf("report %q: %v", r, err)
	}
	return ""
}

// checkNesting rejects flow collections nested deeper than maxDepth before
// the YAML parser sees them (its cost grows quadratically with depth). It
// counts brackets even inside strings, so it cannot be fooled by quoting; a
// string with more than maxDepth unbalanced brackets is a false positive no
// real contract has. Block nesting is bounded while building the tree.
func checkNesting(data []byte) *Error {
	depth, line, col := 0, 1, 0
	for _, c := range data {
		col++
		switch c {
		case '\n':
			line, col = line+1, 0
		case '[', '{':
			depth++
			if depth > maxDepth {
				return &Error{Line: line, Col: col, Msg: fmt.Sprintf("nested deeper than %d levels", maxDepth)}
			}
		case ']', '}':
			depth--
		}
	}
	return nil
}

// decodeError places a failure to decode a schema-valid value into its Go
// field: in practice a number too large for the field (budget.steps:
// 99999999999999999999999). base is the pointer of the value decoded
// (json's Field is relative to it).
func decodeError(t *tree, base string, err error) *Error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return &Error{Field: fieldOf(base), Msg: fmt.Sprintf("cannot decode: %v", err)}
	}
	ptr := base
	for _, k := range strings.Split(te.Field, ".") {
		if k != "" {
			ptr = pointer(ptr, k)
		}
	}
	if _, ok := t.values[ptr]; !ok {
		// A list element: json names the list, not the index.
		ptr = base
	}
	p := t.values[ptr]
	e := &Error{Line: p.line, Col: p.col, Field: fieldOf(ptr)}
	num, isNum := strings.CutPrefix(te.Value, "number ")
	switch k := te.Type.Kind(); {
	case isNum && k >= reflect.Int && k <= reflect.Int64:
		e.Msg = fmt.Sprintf("%s does not fit (want a whole number of at most %d)", num, int64(1)<<(te.Type.Bits()-1)-1)
	case isNum:
		e.Msg = fmt.Sprintf("%s does not fit a %s", num, te.Type)
	default:
		e.Msg = fmt.Sprintf("want %s, got %s", te.Type, te.Value)
	}
	return e
}
