package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// budgetWorld is a workspace with its own HOME, XDG directories and state
// directory; commands run in-process with its environment and cwd.
type budgetWorld struct {
	t   *testing.T
	dir string
	env map[string]string
}

func newBudgetWorld(t *testing.T, files map[string]string) *budgetWorld {
	t.Helper()
	w := &budgetWorld{t: t, dir: t.TempDir(), env: map[string]string{}}
	for _, k := range []string{"HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "IOH_STATE_DIR"} {
		w.env[k] = t.TempDir()
	}
	if err := os.Mkdir(filepath.Join(w.dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		w.write(name, content)
	}
	return w
}

func (w *budgetWorld) write(name, content string) {
	w.t.Helper()
	p := filepath.Join(w.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// userConfig writes the user's config.yaml (trusted: it may set the
// endpoint and prices).
func (w *budgetWorld) userConfig(yaml string) {
	w.t.Helper()
	d := filepath.Join(w.env["XDG_CONFIG_HOME"], "ioh")
	if err := os.MkdirAll(d, 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "config.yaml"), []byte(yaml), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

func (w *budgetWorld) getenv(k string) string {
	if v, ok := w.env[k]; ok {
		return v
	}
	if strings.HasSuffix(k, "_API_KEY") || k == "IOH_TEST_MODEL_DELAY" {
		return ""
	}
	return os.Getenv(k)
}

// cli runs ioh-lsp args in the workspace and returns the exit code,
// stdout and stderr.
func (w *budgetWorld) cli(args ...string) (int, string, string) {
	w.t.Helper()
	w.t.Chdir(w.dir)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	code := dispatch(ctx, &cliEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: w.getenv}, args)
	return code, out.String(), errb.String()
}

// runID is the run id a run or resume printed on stderr.
func runID(t *testing.T, stderr string) string {
	t.Helper()
	for _, l := range strings.Split(stderr, "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[0] == "run" && strings.HasPrefix(f[1], "r-") {
			return f[1]
		}
	}
	t.Fatalf("no run id in %q", stderr)
	return ""
}

// runsJSON returns `runs --json` by id.
func (w *budgetWorld) runsJSON() map[string]map[string]any {
	w.t.Helper()
	code, out, errOut := w.cli("runs", "--json")
	if code != 0 {
		w.t.Fatalf("runs --json: exit %d: %s", code, errOut)
	}
	var list []map[string]any
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		w.t.Fatalf("runs --json %q: %v", out, err)
	}
	m := map[string]map[string]any{}
	for _, r := range list {
		m[r["id"].(string)] = r
	}
	return m
}

// traceEvents returns `trace ID --json` events of one type.
func (w *budgetWorld) traceEvents(id, typ string) []map[string]any {
	w.t.Helper()
	code, out, errOut := w.cli("trace", id, "--json")
	if code != 0 {
		w.t.Fatalf("trace: exit %d: %s", code, errOut)
	}
	var evs []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var e map[string]any
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			w.t.Fatalf("trace line %q: %v", l, err)
		}
		if e["type"] == typ {
			evs = append(evs, e)
		}
	}
	return evs
}

// chatServer speaks the chat completions stream: each call answers the
// next tool call of turns (then finish), with usage and, when cost is not
// nil, OpenRouter's usage.cost. It records the model each request asked
// for and each request body.
type chatServer struct {
	mu     sync.Mutex
	models []string
	bodies []map[string]any
}

func newChatServer(t *testing.T, turns []string, cost *float64) (*httptest.Server, *chatServer) {
	t.Helper()
	cs := &chatServer{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		assistants := 0
		for _, m := range body["messages"].([]any) {
			if m.(map[string]any)["role"] == "assistant" {
				assistants++
			}
		}
		cs.mu.Lock()
		cs.models = append(cs.models, fmt.Sprint(body["model"]))
		cs.bodies = append(cs.bodies, body)
		cs.mu.Unlock()
		call := `{"name":"finish","arguments":"{\"summary\":\"done\"}"}`
		if assistants < len(turns) {
			call = turns[assistants]
		}
		w.Header().Set("Content-Type", "text/event-stream")
		head := fmt.Sprintf(`{"id":"gen-%d","object":"chat.completion.chunk","created":1764500000,"model":%q,`, assistants, body["model"])
		io.WriteString(w, ": OPENROUTER PROCESSING\n\n")
		fmt.Fprintf(w, "data: %s\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"tool_calls\":[{\"index\":0,\"id\":\"call_%d\",\"type\":\"function\",\"function\":%s}]},\"finish_reason\":null}]}\n\n", head, assistants, call)
		fmt.Fprintf(w, "data: %s\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n", head)
		usage := `{"prompt_tokens":1000,"completion_tokens":100,"total_tokens":1100`
		if cost != nil {
			usage += fmt.Sprintf(`,"cost":%v,"is_byok":false,"cost_details":{"upstream_inference_cost":null}`, *cost)
		}
		fmt.Fprintf(w, "data: %s\"choices\":[],\"usage\":%s}}\n\n", head, usage)
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv, cs
}

func readTurns(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf(`{"name":"read_file","arguments":"{\"path\":\"a.txt\",\"offset\":%d}"}`, i+1))
	}
	return out
}

// An OpenRouter run of a model without a price starts with a dollar budget
// (OpenRouter reports each call's charge), the trace and runs --json show
// the reported charges, and the budget stops the run on them; raised, the
// run finishes and is charged each call once.
func TestOpenRouterReportedCharges(t *testing.T) {
	cost := 0.01
	srv, cs := newChatServer(t, readTurns(5), &cost)
	w := newBudgetWorld(t, map[string]string{"a.txt": "a\nb\nc\nd\ne\nf\n", "task.ioh.yaml": `version: 1
goal: "read the file"
budget: {cost_usd: 0.025}
`})
	w.env["OPENROUTER_API_KEY"] = "sk-or-test-123"
	w.userConfig(fmt.Sprintf("model: {provider: openrouter, name: vendor/unpriced-model, base_url: %q}\n", srv.URL+"/api/v1"))

	code, _, errOut := w.cli("run", "task.ioh.yaml", "--approve", "never")
	if code != exitBudget {
		t.Fatalf("run: exit %d, want %d (budget): %s", code, exitBudget, errOut)
	}
	id := runID(t, errOut)
	if !strings.Contains(errOut, "ioh-lsp resume "+id+" --budget-usd") {
		t.Errorf("no hint to raise the dollar budget in %q", errOut)
	}
	if u, _ := cs.bodies[0]["usage"].(map[string]any); u["include"] != true {
		t.Errorf("the request did not ask for usage accounting: %v", cs.bodies[0]["usage"])
	}
	run := w.runsJSON()[id]
	calls := len(cs.models)
	spent, ok := run["cost_usd"].(float64)
	if !ok || math.Abs(spent-0.01*float64(calls)) > 1e-9 || spent > 0.025+1e-9 {
		t.Errorf("runs --json cost_usd %v after %d calls of $0.01 (budget $0.025)", run["cost_usd"], calls)
	}
	if lim, _ := run["limits"].(map[string]any); lim["cost_usd"] != 0.025 {
		t.Errorf("runs --json limits %v", run["limits"])
	}
	turns := w.traceEvents(id, "model_turn")
	if len(turns) != calls || calls == 0 {
		t.Fatalf("%d model_turn events for %d calls", len(turns), calls)
	}
	for _, e := range turns {
		if e["cost_source"] != "provider" || e["cost_usd"] != 0.01 {
			t.Errorf("model_turn cost %v from %v, want the reported 0.01 from the provider", e["cost_usd"], e["cost_source"])
		}
	}

	code, _, errOut = w.cli("resume", id, "--budget-usd", "1", "--approve", "never")
	if code != exitOK {
		t.Fatalf("resume --budget-usd 1: exit %d: %s", code, errOut)
	}
	run = w.runsJSON()[id]
	if run["outcome"] != "unverified" || run["steps"] != 6.0 {
		t.Errorf("resumed run: %v after %v steps, want unverified after 6", run["outcome"], run["steps"])
	}
	if len(cs.models) != 6 {
		t.Errorf("%d calls in all, want 6 (each step's call once)", len(cs.models))
	}
	if got := run["cost_usd"].(float64); math.Abs(got-0.06) > 1e-9 {
		t.Errorf("cost $%v, want 6 reported charges of $0.01", got)
	}
}

// An unknown model with a dollar budget is refused with the prices key to
// set (exit 2, nothing sent); without a dollar budget it runs and its cost
// is unknown, not $0.
func TestUnknownModelCost(t *testing.T) {
	srv, cs := newChatServer(t, readTurns(1), nil)
	w := newBudgetWorld(t, map[string]string{"a.txt": "a\n", "task.ioh.yaml": `version: 1
goal: "read the file"
budget: {cost_usd: 1}
`})
	w.userConfig(fmt.Sprintf("model: {provider: openai-compatible, name: local-llm, base_url: %q}\n", srv.URL+"/v1"))
	code, _, errOut := w.cli("run", "task.ioh.yaml", "--approve", "never")
	if code != exitUsage {
		t.Fatalf("exit %d, want %d: %s", code, exitUsage, errOut)
	}
	for _, want := range []string{`model "local-llm"`, `prices."local-llm"`, "budget.cost_usd"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("error %q lacks %s", errOut, want)
		}
	}
	if len(cs.models) != 0 {
		t.Errorf("%d calls sent before the refusal", len(cs.models))
	}

	w.write("task.ioh.yaml", "version: 1\ngoal: \"read the file\"\nbudget: {cost_usd: 0}\n")
	code, _, errOut = w.cli("run", "task.ioh.yaml", "--approve", "never")
	if code != exitOK {
		t.Fatalf("without a dollar budget: exit %d: %s", code, errOut)
	}
	id := runID(t, errOut)
	if !strings.Contains(errOut, "cost unknown") {
		t.Errorf("summary %q does not say the cost is unknown", errOut)
	}
	run := w.runsJSON()[id]
	if v, ok := run["cost_usd"]; !ok || v != nil {
		t.Errorf("runs --json cost_usd = %v, want null", v)
	}
	if run["unpriced_calls"] != 2.0 {
		t.Errorf("unpriced_calls = %v, want 2", run["unpriced_calls"])
	}
	_, out, _ := w.cli("runs")
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, id) {
			line = l
		}
	}
	if !strings.Contains(line, "unknown") || strings.Contains(line, "$0.0000") {
		t.Errorf("runs line %q: want the cost shown as unknown, not $0", line)
	}
	for _, e := range w.traceEvents(id, "model_turn") {
		if e["cost_source"] != "unknown" || e["cost_usd"] != nil {
			t.Errorf("model_turn cost %v from %v, want null from unknown", e["cost_usd"], e["cost_source"])
		}
	}
}

// --model with a different price: the cost, the dollar-budget check and
// run_started follow the override, and the request asks for it.
func TestModelOverridePrice(t *testing.T) {
	srv, cs := newChatServer(t, nil, nil)
	w := newBudgetWorld(t, map[string]string{"task.ioh.yaml": `version: 1
goal: "finish"
budget: {cost_usd: 5}
`})
	w.userConfig(fmt.Sprintf(`model: {provider: openai-compatible, name: cheap-model, base_url: %q}
prices:
  cheap-model: {input: 1, output: 1}
  dear-model: {input: 100, output: 200}
`, srv.URL+"/v1"))
	code, _, errOut := w.cli("run", "task.ioh.yaml", "--model", "dear-model", "--approve", "never")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	id := runID(t, errOut)
	// 1000 input tokens at $100/M and 100 output tokens at $200/M.
	if got := w.runsJSON()[id]["cost_usd"]; got != 0.12 {
		t.Errorf("cost %v, want the override's $0.12 (the contract model's would be $0.0011)", got)
	}
	started := w.traceEvents(id, "run_started")
	if len(started) != 1 || started[0]["model"] != "dear-model" {
		t.Errorf("run_started %v, want model dear-model", started)
	}
	turns := w.traceEvents(id, "model_turn")
	if len(turns) != 1 || turns[0]["cost_source"] != "config" {
		t.Errorf("model_turn %v, want priced from config", turns)
	}
	if len(cs.models) != 1 || cs.models[0] != "dear-model" {
		t.Errorf("requests asked for %v", cs.models)
	}

	// An override to a model nothing prices is refused under a dollar
	// budget, though the contract's model is priced.
	code, _, errOut = w.cli("run", "task.ioh.yaml", "--model", "nameless-model", "--approve", "never")
	if code != exitUsage || !strings.Contains(errOut, `prices."nameless-model"`) {
		t.Errorf("unpriced override: exit %d: %s", code, errOut)
	}
}

// raiseCassette edits two files between reads; each turn carries usage
// and the charge its provider reported when it was recorded.
const raiseCassette = `{"version": 1, "turns": [
 {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}], "usage": {"input_tokens": 5000, "output_tokens": 100}, "cost_usd": 0.01},
 {"tool_calls": [{"name": "edit_file", "arguments": {"path": "a.txt", "old": "a", "new": "a1"}}], "usage": {"input_tokens": 5000, "output_tokens": 100}, "cost_usd": 0.01},
 {"tool_calls": [{"name": "read_file", "arguments": {"path": "b.txt"}}], "usage": {"input_tokens": 5000, "output_tokens": 100}, "cost_usd": 0.01},
 {"tool_calls": [{"name": "edit_file", "arguments": {"path": "b.txt", "old": "b", "new": "b1"}}], "usage": {"input_tokens": 5000, "output_tokens": 100}, "cost_usd": 0.01},
 {"tool_calls": [{"name": "edit_file", "arguments": {"path": "a.txt", "old": "a1", "new": "a12"}}], "usage": {"input_tokens": 5000, "output_tokens": 100}, "cost_usd": 0.01},
 {"tool_calls": [{"name": "finish", "arguments": {"summary": "edited both"}}], "usage": {"input_tokens": 5000, "output_tokens": 100}, "cost_usd": 0.01}
]}`

func raiseWorld(t *testing.T, budget string) *budgetWorld {
	return newBudgetWorld(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n", "cassette.json": raiseCassette,
		"task.ioh.yaml": "version: 1\ngoal: \"edit both\"\nbudget: " + budget + "\nmodel: {provider: replay, cassette: cassette.json}\n"})
}

type cliTotals struct {
	outcome   string
	steps     float64
	tokens    float64
	cost      float64
	toolCalls string
}

func (w *budgetWorld) totals(id string) cliTotals {
	w.t.Helper()
	r := w.runsJSON()[id]
	ct := cliTotals{outcome: fmt.Sprint(r["outcome"]), steps: r["steps"].(float64), tokens: r["tokens"].(float64)}
	ct.cost, _ = r["cost_usd"].(float64)
	var calls []string
	for _, e := range w.traceEvents(id, "tool_call") {
		calls = append(calls, fmt.Sprint(e["tool"], " ", e["arguments"]))
	}
	ct.toolCalls = strings.Join(calls, "\n")
	return ct
}

// A run stopped by each kind of budget, raised from the command line and
// resumed, finishes with the steps, tokens, cost and tool calls of an
// uninterrupted run with the larger budget: nothing is charged twice and
// no tool call repeats. Lowering a budget is a usage error.
func TestRaiseAndResumeCLI(t *testing.T) {
	const big = "{steps: 50, tokens: 1000000, cost_usd: 1, wall: 1h}"
	ref := raiseWorld(t, big)
	code, _, errOut := ref.cli("run", "task.ioh.yaml", "--approve", "never")
	if code != exitOK {
		t.Fatalf("reference run: exit %d: %s", code, errOut)
	}
	want := ref.totals(runID(t, errOut))
	if want.steps != 6 || math.Abs(want.cost-0.06) > 1e-9 {
		t.Fatalf("reference run: %+v", want)
	}
	tests := []struct {
		name, budget string
		delay        string
		raise        []string
		lower        string
	}{
		{"steps", "{steps: 2, tokens: 1000000, cost_usd: 1, wall: 1h}", "", []string{"--budget-steps", "50"}, "1"},
		{"tokens", "{steps: 50, tokens: 12000, cost_usd: 1, wall: 1h}", "", []string{"--budget-tokens", "1000000"}, "100"},
		{"cost", "{steps: 50, tokens: 1000000, cost_usd: 0.025, wall: 1h}", "", []string{"--budget-usd", "1"}, "0.01"},
		{"wall", "{steps: 50, tokens: 1000000, cost_usd: 1, wall: 1s}", "400ms", []string{"--budget-wall", "1h"}, "500ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := raiseWorld(t, tt.budget)
			if tt.delay != "" {
				w.env["IOH_TEST_MODEL_DELAY"] = tt.delay // each call waits, so the wall budget runs out mid-run
			}
			code, _, errOut := w.cli("run", "task.ioh.yaml", "--approve", "never")
			if code != exitBudget {
				t.Fatalf("small budget: exit %d, want %d: %s", code, exitBudget, errOut)
			}
			id := runID(t, errOut)
			stopped := w.totals(id)
			if stopped.outcome != "budget_exceeded" || stopped.steps >= want.steps {
				t.Fatalf("stopped run: %+v", stopped)
			}
			t.Logf("stopped after %v of %v steps", stopped.steps, want.steps)
			flag := tt.raise[0]
			if code, _, errOut := w.cli("resume", id, flag, tt.lower, "--approve", "never"); code != exitUsage || !strings.Contains(errOut, "only raise") {
				t.Errorf("resume %s %s (lower): exit %d, want %d: %s", flag, tt.lower, code, exitUsage, errOut)
			}
			if code, _, errOut := w.cli("resume", id, flag, "-5"); code != exitUsage {
				t.Errorf("resume %s -5: exit %d, want %d: %s", flag, code, exitUsage, errOut)
			}
			delete(w.env, "IOH_TEST_MODEL_DELAY")
			code, _, errOut = w.cli(append([]string{"resume", id, "--approve", "never"}, tt.raise...)...)
			if code != exitOK {
				t.Fatalf("resume %v: exit %d: %s", tt.raise, code, errOut)
			}
			got := w.totals(id)
			if got.outcome != want.outcome || got.steps != want.steps || got.tokens != want.tokens || math.Abs(got.cost-want.cost) > 1e-9 {
				t.Errorf("resumed: %s, %v steps, %v tokens, $%v; uninterrupted: %s, %v, %v, $%v",
					got.outcome, got.steps, got.tokens, got.cost, want.outcome, want.steps, want.tokens, want.cost)
			}
			if got.toolCalls != want.toolCalls {
				t.Errorf("tool calls:\n%s\nuninterrupted:\n%s", got.toolCalls, want.toolCalls)
			}
			if raised := w.traceEvents(id, "budget_raised"); len(raised) != 1 {
				t.Errorf("%d budget_raised events, want 1", len(raised))
			}
		})
	}
}
