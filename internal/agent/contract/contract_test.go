package contract

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
)

const full = `version: 1
goal: "Make ParseDuration accept a 'd' suffix for days"
context: ["time/format.go"]
constraints: ["keep the public API unchanged"]
scope:
  write: ["time/**"]
verify:
  checks:
    - name: unit
      run: ["go", "test", "./time/..."]
      expect_exit: 0
      timeout: 5m
      network: false
  red_green: true
  protect: ["time/format_test.go"]
budget:
  steps: 40
  tokens: 400000
  cost_usd: 2.00
  wall: 15m
retry: { max: 4, base: 500ms, cap: 30s }
model:
  provider: anthropic
  name: claude-sonnet-4-6
  base_url: ""
  api_key_env: ""
  cassette: ""
  fallback: [{ provider: openrouter, name: anthropic/claude-sonnet-4.6 }]
policy: { rules: [{act: exec, effect: deny, pattern: "rm *"}] }
agents: { max_total: 8, max_depth: 2, max_concurrent: 4 }
`

func TestParseFull(t *testing.T) {
	got, err := Parse([]byte(full), "task.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := &Contract{
		Version:     1,
		Goal:        "Make ParseDuration accept a 'd' suffix for days",
		Context:     []string{"time/format.go"},
		Constraints: []string{"keep the public API unchanged"},
		Scope:       Scope{Write: []string{"time/**"}},
		Verify: Verify{
			Checks:   []Check{{Name: "unit", Run: []string{"go", "test", "./time/..."}, Timeout: 5 * time.Minute}},
			RedGreen: true,
			Protect:  []string{"time/format_test.go"},
		},
		Budget: Budget{Steps: 40, Tokens: 400000, CostUSD: 2, Wall: 15 * time.Minute},
		Retry:  Retry{Max: 4, Base: 500 * time.Millisecond, Cap: 30 * time.Second},
		Model: Model{Provider: "anthropic", Name: "claude-sonnet-4-6",
			Fallback: []Fallback{{Provider: "openrouter", Name: "anthropic/claude-sonnet-4.6"}}},
		Policy: Policy{Rules: []policy.Rule{{Act: policy.ActExec, Effect: policy.Deny, Pattern: "rm *"}}},
		Agents: Agents{MaxTotal: 8, MaxDepth: 2, MaxConcurrent: 4},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("Parse (-got +want):\n%s", diff)
	}
}

// parseDefaultCases are valid contracts and what they parse to; the schema
// agreement test reuses them.
var parseDefaultCases = []struct {
	name, src string
	want      *Contract
}{
	{"minimal yaml", "goal: fix it\n", &Contract{
		Version: 1, Goal: "fix it", Budget: DefaultBudget(), Retry: DefaultRetry(), Agents: DefaultAgents(), Omitted: allOmitted,
	}},
	{"json with tabs and bare verify list", "{\n\t\"goal\": \"fix it\",\n\t\"verify\": [{\"shell\": \"make test\"}, {\"run\": [\"go\", \"vet\"], \"expect_exit\": 1, \"network\": true}]\n}\n", &Contract{
		Version: 1, Goal: "fix it",
		Verify: Verify{Checks: []Check{
			{Name: "make test", Shell: "make test", Timeout: DefaultCheckTimeout},
			{Name: "go vet", Run: []string{"go", "vet"}, ExpectExit: 1, Timeout: DefaultCheckTimeout, Network: true},
		}},
		Budget: DefaultBudget(), Retry: DefaultRetry(), Agents: DefaultAgents(), Omitted: allOmitted,
	}},
	{"explicit zero budgets mean unlimited", "goal: g\nbudget: {steps: 0, tokens: 0, cost_usd: 0, wall: \"0\"}\nretry: {max: 0}\n", &Contract{
		Version: 1, Goal: "g", Budget: Budget{}, Retry: Retry{Max: 0, Base: DefaultRetryBase, Cap: DefaultRetryCap}, Agents: DefaultAgents(),
	}},
	{"null and empty values count as omitted", "goal: g\nverify:\nbudget: {steps: null}\ncontext: ~\n", &Contract{
		Version: 1, Goal: "g", Budget: DefaultBudget(), Retry: DefaultRetry(), Agents: DefaultAgents(), Omitted: allOmitted,
	}},
	{"byte-order mark and CRLF", "\ufeffgoal: g\r\nbudget:\r\n  steps: 3\r\n", &Contract{
		Version: 1, Goal: "g", Budget: Budget{Steps: 3, Tokens: DefaultTokens, CostUSD: DefaultCostUSD, Wall: DefaultWall}, Retry: DefaultRetry(), Agents: DefaultAgents(),
		Omitted: BudgetOmitted{Tokens: true, CostUSD: true, Wall: true},
	}},
	{"anchors and aliases", "goal: g\ncontext: [&f a.go, *f]\n", &Contract{
		Version: 1, Goal: "g", Context: []string{"a.go", "a.go"}, Budget: DefaultBudget(), Retry: DefaultRetry(), Agents: DefaultAgents(), Omitted: allOmitted,
	}},
	{"partial sections keep other defaults", "goal: g\nbudget: {steps: 3}\nagents: {max_depth: 0}\nverify: {red_green: true}\n", &Contract{
		Version: 1, Goal: "g", Budget: Budget{Steps: 3, Tokens: DefaultTokens, CostUSD: DefaultCostUSD, Wall: DefaultWall},
		Verify: Verify{RedGreen: true},
		Retry:  DefaultRetry(), Agents: Agents{MaxTotal: 8, MaxDepth: 0, MaxConcurrent: 4},
		Omitted: BudgetOmitted{Tokens: true, CostUSD: true, Wall: true},
	}},
}

// allOmitted: a contract that writes no budget field.
var allOmitted = BudgetOmitted{Steps: true, Tokens: true, CostUSD: true, Wall: true}

func TestParseDefaults(t *testing.T) {
	tests := parseDefaultCases
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.src), "t.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("Parse (-got +want):\n%s", diff)
			}
		})
	}
}

// parseErrorCases are malformed contracts and their exact messages; the
// schema agreement test reuses them.
var parseErrorCases = []struct {
	name, src, want string
}{
	{"empty", "", "t.yaml: empty contract: want a mapping with at least a goal"},
	{"comment only", "# nothing\n", "t.yaml: empty contract: want a mapping with at least a goal"},
	{"missing goal", "version: 1\ncontext: [a]\n", "t.yaml:1:1: goal: required field missing"},
	{"empty goal", "goal: \"\"\n", "t.yaml:1:7: goal: must not be empty"},
	{"null goal", "version: 1\ngoal:\n", "t.yaml:1:1: goal: required field missing"},
	{"unknown top-level key", "goal: g\nbudgets: {steps: 3}\n", "t.yaml:2:1: budgets: unknown field; did you mean budget?"},
	{"unknown nested key", "goal: g\nbudget:\n  steps: 3\n  dollars: 2\n", "t.yaml:4:3: budget.dollars: unknown field"},
	{"unknown key in check", "goal: g\nverify:\n  - run: [go, test]\n    retries: 2\n", "t.yaml:4:5: verify[0].retries: unknown field"},
	{"misspelt key in check", "goal: g\nverify:\n  - run: [go, test]\n    timout: 2m\n", "t.yaml:4:5: verify[0].timout: unknown field; did you mean timeout?"},
	{"wrong version", "version: 2\ngoal: g\n", "t.yaml:1:10: version: unsupported version 2 (want 1)"},
	{"goal not a string", "goal: [a, b]\n", "t.yaml:1:7: goal: expected string, got array"},
	{"steps not an integer", "goal: g\nbudget: {steps: 2.5}\n", "t.yaml:2:17: budget.steps: expected integer, got number"},
	{"negative tokens", "goal: g\nbudget: {tokens: -1}\n", "t.yaml:2:18: budget.tokens: must be at least 0"},
	{"bad duration", "goal: g\nbudget:\n  wall: 5 minutes\n", "t.yaml:3:9: budget.wall: invalid duration \"5 minutes\" (want a Go duration such as 30s, 5m or 1h30m)"},
	{"negative duration", "goal: g\nretry: {base: -1s}\n", "t.yaml:2:15: retry.base: invalid duration \"-1s\" (want a Go duration such as 30s, 5m or 1h30m)"},
	{"overflowing duration", "goal: g\nretry: {cap: 9999999999h}\n", "t.yaml:2:14: retry.cap: invalid duration \"9999999999h\": time: invalid duration \"9999999999h\""},
	{"cap below base", "goal: g\nretry: {base: 2s, cap: 1s}\n", "t.yaml:2:24: retry.cap: cap 1s is shorter than base 2s"},
	{"check timeout", "goal: g\nverify:\n  checks:\n    - run: [make]\n      timeout: soon\n", "t.yaml:5:16: verify.checks[0].timeout: invalid duration \"soon\" (want a Go duration such as 30s, 5m or 1h30m)"},
	{"check with run and shell", "goal: g\nverify:\n  - run: [make]\n    shell: make\n", "t.yaml:3:5: verify[0]: want exactly one of run and shell"},
	{"check with neither", "goal: g\nverify:\n  checks:\n    - name: nothing\n", "t.yaml:4:7: verify.checks[0]: want exactly one of run and shell"},
	{"empty argv", "goal: g\nverify: [{run: []}]\n", "t.yaml:2:16: verify[0].run: must not be empty"},
	{"verify wrong type", "goal: g\nverify: 5\n", "t.yaml:2:9: verify: expected array or object, got number"},
	{"unknown report", "goal: g\nverify: [{shell: x, report: xml}]\n", "t.yaml:2:29: verify[0].report: \"xml\" does not match the pattern at #/$defs/check/properties/report"},
	{"report path outside", "goal: g\nverify: [{shell: x, report: \"junit:../r.xml\"}]\n", "t.yaml:2:29: verify[0].report: report \"junit:../r.xml\": the path must be relative and inside the workspace"},
	{"report path absolute", "goal: g\nverify: [{shell: x, report: \"junit:/tmp/r.xml\"}]\n", "t.yaml:2:29: verify[0].report: report \"junit:/tmp/r.xml\": the path must be relative and inside the workspace"},
	{"expect_exit too big", "goal: g\nverify: [{shell: x, expect_exit: 300}]\n", "t.yaml:2:34: verify[0].expect_exit: must be at most 255"},
	{"unknown provider", "goal: g\nmodel: {provider: gemini}\n", "t.yaml:2:19: model.provider: \"gemini\" is not one of anthropic, openai, openrouter, openai-compatible, replay"},
	{"api_key_env not a key", "goal: g\nmodel:\n  api_key_env: HOME\n", "t.yaml:3:16: model.api_key_env: \"HOME\" must name a variable ending in _API_KEY or _TOKEN"},
	{"fallback without provider", "goal: g\nmodel:\n  fallback:\n    - name: gpt-5\n", "t.yaml:4:7: model.fallback[0].provider: required field missing"},
	{"fallback api_key_env", "goal: g\nmodel: {fallback: [{provider: openai, api_key_env: AWS_SECRET}]}\n", "t.yaml:2:52: model.fallback[0].api_key_env: \"AWS_SECRET\" must name a variable ending in _API_KEY or _TOKEN"},
	{"bad policy act", "goal: g\npolicy:\n  rules:\n    - {act: delete, effect: deny, pattern: x}\n", "t.yaml:4:13: policy.rules[0].act: \"delete\" is not one of read, write, exec, net, mcp"},
	{"policy rule missing pattern", "goal: g\npolicy: {rules: [{act: read, effect: deny}]}\n", "t.yaml:2:18: policy.rules[0].pattern: required field missing"},
	{"max_total zero", "goal: g\nagents: {max_total: 0}\n", "t.yaml:2:21: agents.max_total: must be at least 1"},
	{"json type error", `{"goal": "g", "budget": {"steps": "x"}}`, "t.yaml:1:35: budget.steps: expected integer, got string"},
	{"json unknown key", "{\n\t\"goal\": \"g\",\n\t\"retries\": 3\n}\n", "t.yaml:3:2: retries: unknown field"},
	{"CRLF positions", "goal: g\r\nbudget:\r\n  steps: 3\r\n  bad: 1\r\n", "t.yaml:4:3: budget.bad: unknown field"},
	{"duplicate key", "goal: a\ngoal: b\n", "t.yaml:2:1: syntax error: mapping key \"goal\" already defined at [1:1]"},
	{"yaml syntax", "goal: [a\n", "t.yaml:1:7: syntax error: sequence end token ']' not found"},
	{"json syntax", "{\"goal\": \"g\"\n", "t.yaml:1:1: syntax error: could not find flow mapping end token '}'"},
	{"two documents", "goal: a\n---\ngoal: b\n", "t.yaml:3:1: want one YAML document, found several"},
	{"top level list", "- goal: a\n", "t.yaml:1:1: expected object, got array"},
	{"unknown alias", "goal: *nope\n", "t.yaml:1:7: goal: unknown alias \"nope\""},
	{"merge key", "base: &b {goal: x}\n<<: *b\n", "t.yaml:2:1: merge keys (<<) are not supported"},
	{"first error in document order wins", "goal: g\nzzz: 1\nbudget: {steps: -1}\n", "t.yaml:2:1: zzz: unknown field"},
}

func TestParseErrors(t *testing.T) {
	tests := parseErrorCases
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.src), "t.yaml")
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", c)
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is %T, want *contract.Error", err, err)
			}
			if ce.File != "t.yaml" {
				t.Errorf("File = %q, want t.yaml", ce.File)
			}
			if diff := cmp.Diff(err.Error(), tt.want); diff != "" {
				t.Errorf("message (-got +want):\n%s", diff)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "fix.ioh.yaml")
	if err := os.WriteFile(path, []byte("goal: g\nmodel: {provider: replay, cassette: c.json}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	// The cassette stays as written; config.PrepareContract resolves it
	// (against the task file's directory) and confines it, once.
	if diff := cmp.Diff([]string{c.Path, c.Model.Cassette}, []string{path, "c.json"}); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml")); !errors.Is(err, ErrNotFound) {
		t.Errorf("Load(missing) = %v, want ErrNotFound", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(full))
	f.Add([]byte("goal: g\nverify: [{run: [a]}]\n"))
	f.Add([]byte("{\"goal\": \"g\", \"budget\": {\"wall\": \"1h\"}}"))
	f.Add([]byte("a: &x [*x]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, "f.yaml")
		if err == nil && c.Goal == "" {
			t.Fatalf("accepted a contract without a goal: %q", data)
		}
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %T is not *contract.Error: %v", err, err)
			}
		}
	})
}
