// Package suite reads an evaluation suite: the task contracts to run, each
// with its workspace (a directory, or a git repository and commit available
// locally), and the variants to compare (provider and model, cassette,
// budgets, a user configuration). docs/eval.md describes the format.
package suite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/config"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
)

// FileName is the suite file a suite directory may hold.
const FileName = "suite.yaml"

// MaxSize bounds a suite file.
const MaxSize = 4 << 20

// Suite is a loaded suite: every path in it is absolute.
type Suite struct {
	// Path is the suite file, or the directory of a suite without one.
	Path     string
	Name     string
	Tasks    []Task
	Variants []Variant
}

// Task is one task contract and where its workspace comes from.
type Task struct {
	ID string
	// Dir is the workspace directory (a path task), or "" for a git task.
	Dir string
	// Git and Commit name a repository available locally and the commit
	// to check out (a git task).
	Git, Commit string
	// Contract is the contract's path: relative to the workspace when it
	// lies inside it (Inside), else absolute.
	Contract string
	Inside   bool
	// Cassette is the task's replay cassette ("" for none).
	Cassette string
}

// Variant is one way of running every task.
type Variant struct {
	Name     string
	Provider string
	Model    string
	// Cassette may hold {task}, replaced by the task's id; relative
	// paths were resolved against the suite file's directory.
	Cassette string
	Budget   Budget
	// Config is a user configuration (YAML) the variant's runs read
	// instead of the user's own ("" keeps the user's).
	Config string
}

// Budget holds a variant's budget fields; zero fields keep the contract's.
type Budget struct {
	Steps   int
	Tokens  int64
	CostUSD float64
	Wall    time.Duration
}

// Apply writes b's set fields over c's budget.
func (b Budget) Apply(c *contract.Contract) {
	if b.Steps > 0 {
		c.Budget.Steps, c.Omitted.Steps = b.Steps, false
	}
	if b.Tokens > 0 {
		c.Budget.Tokens, c.Omitted.Tokens = b.Tokens, false
	}
	if b.CostUSD > 0 {
		c.Budget.CostUSD, c.Omitted.CostUSD = b.CostUSD, false
	}
	if b.Wall > 0 {
		c.Budget.Wall, c.Omitted.Wall = b.Wall, false
	}
}

// CassetteFor is the cassette a cell of task t under v replays: the
// variant's (with {task} replaced), else the task's.
func (v Variant) CassetteFor(t Task) string {
	if v.Cassette != "" {
		return strings.ReplaceAll(v.Cassette, "{task}", t.ID)
	}
	return t.Cassette
}

// Error is a problem in a suite, at its file (Source) and line: the
// configuration's error type, which formats as file:line:col: message.
type Error = config.Error

// file is the YAML form.
type file struct {
	Version  int           `yaml:"version"`
	Name     string        `yaml:"name"`
	Tasks    []fileTask    `yaml:"tasks"`
	Variants []fileVariant `yaml:"variants"`
}

type fileTask struct {
	ID        string   `yaml:"id"`
	Workspace string   `yaml:"workspace"`
	Git       *fileGit `yaml:"git"`
	Contract  string   `yaml:"contract"`
	Cassette  string   `yaml:"cassette"`
}

type fileGit struct {
	URL    string `yaml:"url"`
	Commit string `yaml:"commit"`
}

type fileVariant struct {
	Name     string         `yaml:"name"`
	Provider string         `yaml:"provider"`
	Model    string         `yaml:"model"`
	Cassette string         `yaml:"cassette"`
	Budget   *fileBudget    `yaml:"budget"`
	Config   map[string]any `yaml:"config"`
}

type fileBudget struct {
	Steps   int     `yaml:"steps"`
	Tokens  int64   `yaml:"tokens"`
	CostUSD float64 `yaml:"cost_usd"`
	Wall    string  `yaml:"wall"`
}

// Load reads a suite file, or a directory: its suite.yaml when it has
// one, else every subdirectory holding one *.ioh.yaml contract at its top
// is a task (its cassette.json, when present, the task's cassette) and
// the one variant is the configured model.
func Load(path string) (*Suite, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("suite %s: %w", path, err)
	}
	if !st.IsDir() {
		return loadFile(abs)
	}
	if _, err := os.Stat(filepath.Join(abs, FileName)); err == nil {
		return loadFile(filepath.Join(abs, FileName))
	}
	return loadDir(abs)
}

func loadFile(path string) (*Suite, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("suite %s: %w", path, err)
	}
	if len(data) > MaxSize {
		return nil, &Error{Source: path, Msg: fmt.Sprintf("suite is larger than %d bytes", MaxSize)}
	}
	p := &positions{file: path}
	if p.ast, err = parser.ParseBytes(data, 0); err != nil {
		return nil, p.yamlErr(err)
	}
	var f file
	if err := yaml.UnmarshalWithOptions(data, &f, yaml.DisallowUnknownField()); err != nil {
		return nil, p.yamlErr(err)
	}
	return p.build(&f)
}

// positions places errors at a node of the parsed file.
type positions struct {
	file string
	ast  *ast.File
}

func (p *positions) yamlErr(err error) error {
	var ye yaml.Error
	if errors.As(err, &ye) {
		e := &Error{Source: p.file, Msg: ye.GetMessage()}
		if tok := ye.GetToken(); tok != nil && tok.Position != nil {
			e.Line, e.Col = tok.Position.Line, tok.Position.Column
		}
		return e
	}
	return &Error{Source: p.file, Msg: strings.TrimSpace(err.Error())}
}

// at is an error at the node ypath names (the file alone when absent).
func (p *positions) at(ypath, format string, args ...any) error {
	e := &Error{Source: p.file, Msg: fmt.Sprintf(format, args...)}
	if yp, err := yaml.PathString(ypath); err == nil && p.ast != nil {
		if n, err := yp.FilterFile(p.ast); err == nil && n != nil {
			if tok := n.GetToken(); tok != nil && tok.Position != nil {
				e.Line, e.Col = tok.Position.Line, tok.Position.Column
			}
		}
	}
	return e
}

// validID: ids name directories and appear in result keys.
func validID(s string) bool {
	if s == "" || len(s) > 100 || s == "." || s == ".." {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

func (p *positions) build(f *file) (*Suite, error) {
	if f.Version != 0 && f.Version != 1 {
		return nil, p.at("$.version", "version %d is not known (want 1)", f.Version)
	}
	if len(f.Tasks) == 0 {
		return nil, p.at("$", "the suite lists no tasks: add a `tasks:` list (docs/eval.md#suites)")
	}
	dir := filepath.Dir(p.file)
	s := &Suite{Path: p.file, Name: f.Name}
	seen := map[string]bool{}
	for i, ft := range f.Tasks {
		t, err := p.task(dir, i, ft)
		if err != nil {
			return nil, err
		}
		if seen[t.ID] {
			return nil, p.at(fmt.Sprintf("$.tasks[%d]", i), "task id %q is used twice", t.ID)
		}
		seen[t.ID] = true
		s.Tasks = append(s.Tasks, t)
	}
	vseen := map[string]bool{}
	for i, fv := range f.Variants {
		v, err := p.variant(dir, i, fv)
		if err != nil {
			return nil, err
		}
		if vseen[v.Name] {
			return nil, p.at(fmt.Sprintf("$.variants[%d].name", i), "variant %q is defined twice", v.Name)
		}
		vseen[v.Name] = true
		s.Variants = append(s.Variants, v)
	}
	if len(s.Variants) == 0 {
		s.Variants = []Variant{{Name: "default"}}
	}
	if s.Name == "" {
		s.Name = strings.TrimSuffix(filepath.Base(dir), string(filepath.Separator))
	}
	return s, nil
}

func (p *positions) task(dir string, i int, ft fileTask) (Task, error) {
	at := fmt.Sprintf("$.tasks[%d]", i)
	var t Task
	switch {
	case ft.Workspace != "" && ft.Git != nil:
		return t, p.at(at, "a task has either `workspace` or `git`, not both")
	case ft.Workspace != "":
		t.Dir = resolve(dir, ft.Workspace)
		st, err := os.Stat(t.Dir)
		if err != nil || !st.IsDir() {
			return t, p.at(at+".workspace", "workspace %s is not a directory", t.Dir)
		}
	case ft.Git != nil:
		if ft.Git.URL == "" || ft.Git.Commit == "" {
			return t, p.at(at+".git", "git needs both `url` and `commit`")
		}
		t.Git, t.Commit = ft.Git.URL, ft.Git.Commit
		if !strings.Contains(t.Git, "://") && !strings.Contains(t.Git, "@") {
			t.Git = resolve(dir, t.Git)
		}
	default:
		return t, p.at(at, "a task needs `workspace` (a directory) or `git` (url and commit)")
	}
	if ft.Contract == "" {
		if t.Dir == "" {
			return t, p.at(at, "a git task needs `contract`, its path inside the repository")
		}
		c, err := findContract(t.Dir)
		if err != nil {
			return t, p.at(at+".workspace", "%v", err)
		}
		ft.Contract = c
	}
	if err := p.placeContract(dir, at, ft.Contract, &t); err != nil {
		return t, err
	}
	t.ID = ft.ID
	if t.ID == "" {
		t.ID = defaultID(t)
	}
	if !validID(t.ID) {
		return t, p.at(at, "task id %q: use letters, digits, '-', '_' and '.'", t.ID)
	}
	if ft.Cassette != "" {
		t.Cassette = resolve(dir, ft.Cassette)
		if _, err := os.Stat(t.Cassette); err != nil {
			return t, p.at(at+".cassette", "cassette %s: %v", t.Cassette, errors.Unwrap(err))
		}
	}
	return t, nil
}

// placeContract sets t's contract: inside the workspace (relative to it)
// when the path is relative to it and exists there (a git task's always
// is), else relative to the suite file. A path task's contract is parsed
// now (a git task's when it is checked out).
func (p *positions) placeContract(dir, at, c string, t *Task) error {
	clean := filepath.Clean(c)
	switch {
	case t.Dir == "" && (filepath.IsAbs(c) || strings.HasPrefix(clean, "..")):
		return p.at(at+".contract", "contract %q must be a path inside the repository", c)
	case t.Dir == "":
		t.Contract, t.Inside = clean, true
		return nil
	case filepath.IsAbs(c):
		t.Contract = clean
		if rel, err := filepath.Rel(t.Dir, clean); err == nil && !strings.HasPrefix(rel, "..") {
			t.Contract, t.Inside = rel, true
		}
	case !strings.HasPrefix(clean, "..") && fileExists(filepath.Join(t.Dir, clean)):
		t.Contract, t.Inside = clean, true
	default:
		t.Contract = resolve(dir, c)
	}
	path := t.Contract
	if t.Inside {
		path = filepath.Join(t.Dir, t.Contract)
	}
	if _, err := contract.Load(path); err != nil {
		return p.at(at+".contract", "%v", err)
	}
	return nil
}

func defaultID(t Task) string {
	if t.Dir != "" {
		return filepath.Base(t.Dir)
	}
	base := strings.TrimSuffix(filepath.Base(t.Git), ".git")
	c := t.Commit
	if len(c) > 8 {
		c = c[:8]
	}
	return base + "-" + c
}

func (p *positions) variant(dir string, i int, fv fileVariant) (Variant, error) {
	at := fmt.Sprintf("$.variants[%d]", i)
	v := Variant{Name: fv.Name, Provider: fv.Provider, Model: fv.Model}
	if !validID(v.Name) {
		return v, p.at(at, "variant name %q: use letters, digits, '-', '_' and '.'", v.Name)
	}
	if fv.Cassette != "" {
		v.Cassette = resolve(dir, fv.Cassette)
	}
	if b := fv.Budget; b != nil {
		if b.Steps < 0 || b.Tokens < 0 || b.CostUSD < 0 {
			return v, p.at(at+".budget", "a budget must be positive")
		}
		v.Budget = Budget{Steps: b.Steps, Tokens: b.Tokens, CostUSD: b.CostUSD}
		if b.Wall != "" {
			d, err := contract.ParseDuration(b.Wall)
			if err != nil {
				return v, p.at(at+".budget.wall", "invalid duration %q: %v", b.Wall, err)
			}
			v.Budget.Wall = d
		}
	}
	if fv.Config != nil {
		out, err := yaml.Marshal(fv.Config)
		if err != nil {
			return v, p.at(at+".config", "%v", err)
		}
		v.Config = string(out)
	}
	return v, nil
}

func resolve(dir, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}
