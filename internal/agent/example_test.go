package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/trace"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// scripted answers each request with the next of its turns, chosen by how
// many assistant turns the transcript already holds.
type scripted []model.Response

func (scripted) Name() string { return "scripted" }

func (s scripted) Complete(_ context.Context, req *model.Request) (*model.Response, error) {
	n := 0
	for _, m := range req.Messages {
		if m.Role == model.RoleAssistant {
			n++
		}
	}
	if n >= len(s) {
		return nil, &model.Error{Class: model.ClassExhausted, Provider: "scripted", Err: fmt.Errorf("no turn %d", n)}
	}
	r := s[n]
	return &r, nil
}

func call(name, args string) model.ToolCall {
	return model.ToolCall{Name: name, Arguments: json.RawMessage(args)}
}

// applyAll approves every act and applies the final change.
type applyAll struct{}

func (applyAll) ApproveAct(context.Context, *agent.ActRequest) (agent.Decision, error) {
	return agent.Decision{Answer: agent.AllowOnce}, nil
}

func (applyAll) ApproveChange(context.Context, *agent.Proposal) (agent.Decision, error) {
	return agent.Decision{Answer: agent.AllowOnce}, nil
}

// Example builds a harness in-process: a workspace, a trace store, a
// provider (here a scripted one), an approver and an event sink; then runs
// a contract to its outcome.
func Example() {
	dir, _ := os.MkdirTemp("", "ioh-example")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "greeting.txt"), []byte("hello world\n"), 0o644)

	ctx := context.Background()
	root, err := workspace.NewRoot(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	store, err := trace.Open(ctx, filepath.Join(dir+"-state", "trace.db"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir + "-state")
	defer store.Close()

	prov := scripted{
		{ToolCalls: []model.ToolCall{call("read_file", `{"path":"greeting.txt"}`)}, Usage: model.Usage{InputTokens: 900, OutputTokens: 20}},
		{ToolCalls: []model.ToolCall{call("edit_file", `{"path":"greeting.txt","old":"world","new":"there"}`)}, Usage: model.Usage{InputTokens: 950, OutputTokens: 30}},
		{ToolCalls: []model.ToolCall{call("finish", `{"summary":"changed the greeting"}`)}, Usage: model.Usage{InputTokens: 990, OutputTokens: 10}},
	}
	h, err := agent.New(agent.Options{
		Root:      root,
		Store:     store,
		Providers: func(*contract.Contract, agent.RetryReporter) (model.Provider, error) { return prov, nil },
		Approver:  applyAll{},
		Events: event.SinkFunc(func(e event.Event) {
			if c, ok := e.Payload.(*event.ToolCall); ok {
				fmt.Println("step", e.Step, c.Tool)
			}
		}),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	run, err := h.Start(ctx, &contract.Contract{Version: 1, Goal: "greet someone else"})
	if err != nil {
		fmt.Println(err)
		return
	}
	res := run.Wait()
	b, _ := os.ReadFile(filepath.Join(dir, "greeting.txt"))
	fmt.Printf("%s after %d steps, %d tokens: %s", res.Outcome, res.Steps, res.Usage.Total(), b)
	// Output:
	// step 1 read_file
	// step 2 edit_file
	// step 3 finish
	// applied after 3 steps, 2900 tokens: hello there
}
