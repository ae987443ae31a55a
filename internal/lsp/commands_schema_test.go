package lsp_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/lsp/api"
	"github.com/ioh-lsp/ioh-lsp/internal/lsp/lsptest"
)

// commandSchema is schema/commands.schema.json as the declarations
// generate it (internal/schemagen keeps the file equal to it), compiled
// by the interpreter the contract parser uses.
type commandSchema struct {
	t   *testing.T
	doc *contract.Schema
}

func loadCommandSchema(t *testing.T) commandSchema {
	t.Helper()
	raw, err := api.CommandsSchema()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := contract.CompileSchema(raw)
	if err != nil {
		t.Fatal(err)
	}
	return commandSchema{t: t, doc: doc}
}

// check validates raw against $defs/<name>.
func (c commandSchema) check(def string, raw json.RawMessage) {
	c.t.Helper()
	s, err := c.doc.Def(def)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := s.Validate(raw); err != nil {
		c.t.Errorf("%s: %s does not fit the schema: %v", def, raw, err)
	}
}

// command checks a command the server offers (code lens or action).
func (c commandSchema) command(cmd *protocol.Command) {
	c.t.Helper()
	params, err := json.Marshal(map[string]any{"command": cmd.Command, "arguments": cmd.Arguments})
	if err != nil {
		c.t.Fatal(err)
	}
	if err := c.doc.Validate(params); err != nil {
		c.t.Errorf("the server offers %s that does not fit the schema: %v", params, err)
	}
}

// call executes a command whose argument and result must fit the schema.
func (c commandSchema) call(ctx context.Context, e *lsptest.Editor, cmd string, arg any) json.RawMessage {
	c.t.Helper()
	a, err := json.Marshal(arg)
	if err != nil {
		c.t.Fatal(err)
	}
	c.check(cmd+".args", a)
	res, err := e.ExecuteCommand(ctx, cmd, json.RawMessage(a))
	if err != nil {
		c.t.Fatalf("%s %s: %v", cmd, a, err)
	}
	c.check(cmd+".result", res)
	return res
}

func TestInitializeListsTheDeclaredCommands(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "hello\n"}, lsptest.Config{})
	got := f.editor.InitializeResult().Capabilities.ExecuteCommandProvider.Commands
	if !slices.Equal(got, api.Names()) {
		t.Errorf("executeCommandProvider.commands = %v, want %v", got, api.Names())
	}
}

// TestEveryDeclaredCommandIsDispatched: each declared command reaches a
// handler that decodes the declared argument: a bad argument is answered
// InvalidParams naming the command and the field, never "unknown
// command"; an undeclared name is unknown.
func TestEveryDeclaredCommandIsDispatched(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "hello\n"}, lsptest.Config{})
	ctx := f.ctx()
	for _, c := range api.All {
		_, err := f.editor.ExecuteCommand(ctx, c.Name, json.RawMessage(`"not an object"`))
		var we *jsonrpc2.Error
		if !errors.As(err, &we) || we.Code != jsonrpc2.InvalidParams || !strings.Contains(we.Message, c.Name+": want one object argument, got a string") {
			t.Errorf("%s with a string argument: %v, want InvalidParams naming it", c.Name, err)
		}
	}
	_, err := f.editor.ExecuteCommand(ctx, "ioh.approve", map[string]any{"runId": 42})
	var we *jsonrpc2.Error
	if !errors.As(err, &we) || we.Code != jsonrpc2.InvalidParams || we.Message != `ioh.approve: field "runId": want a string, got number` {
		t.Errorf("approve with a number: %v", err)
	}
	_, err = f.editor.ExecuteCommand(ctx, "ioh.allowOnce", map[string]any{"runId": "r-1", "act": "exec"})
	if !errors.As(err, &we) || we.Code != jsonrpc2.InvalidParams || we.Message != `ioh.allowOnce: field "target": missing` {
		t.Errorf("allowOnce without target: %v", err)
	}
	_, err = f.editor.ExecuteCommand(ctx, "ioh.bogus", map[string]any{})
	if !errors.As(err, &we) || !strings.Contains(we.Message, `unknown command "ioh.bogus"`) {
		t.Errorf("undeclared command: %v", err)
	}
}

// TestCommandTrafficFitsTheSchema drives a held proposal: every command
// the server offers (lenses, code actions) and every result fits
// schema/commands.schema.json.
func TestCommandTrafficFitsTheSchema(t *testing.T) {
	sch := loadCommandSchema(t)
	f := heldFixture(t, func(*protocol.ShowMessageRequestParams) string { return "" })
	ctx := f.ctx()
	if err := os.WriteFile(filepath.Join(f.dir, "greet.ioh.yaml"), []byte("version: 1\ngoal: greet\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runArg := inline("greet", f.cassette(edit("a.txt", "hello", "world"), finish("done")), []string{"grep", "-q", "world", "a.txt"})
	var ref api.RunRef
	if err := json.Unmarshal(sch.call(ctx, f.editor, "ioh.run", runArg), &ref); err != nil {
		t.Fatal(err)
	}
	uri := f.editor.URI("a.txt")
	if _, err := f.editor.Await(ctx, "held diagnostic", func(s lsptest.State) bool { return len(s.Diagnostics[uri]) > 0 }); err != nil {
		t.Fatal(err)
	}
	if _, err := f.editor.Await(ctx, "apply question", func(s lsptest.State) bool { return len(s.Requests) > 0 }); err != nil {
		t.Fatal(err)
	}
	offered := 0
	for _, file := range []string{"a.txt", "greet.ioh.yaml"} {
		if err := f.editor.OpenFile(ctx, file); err != nil {
			t.Fatal(err)
		}
		lenses, err := f.editor.CodeLenses(ctx, file)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lenses {
			sch.command(&l.Command)
			offered++
		}
		actions, err := f.editor.CodeActions(ctx, file, protocol.Range{}, f.editor.Snapshot().Diagnostics[f.editor.URI(file)])
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range actions {
			if a.Command.Command == "" {
				raw, err := json.Marshal(a)
				if err != nil {
					t.Fatal(err)
				}
				var resolved protocol.CodeAction
				if err := f.editor.Call(ctx, "codeAction/resolve", raw, &resolved); err != nil {
					t.Fatal(err)
				}
				a = &resolved
			}
			if a.Command.Command != "" {
				sch.command(&a.Command)
				offered++
			}
		}
	}
	if offered < 6 {
		t.Errorf("only %d commands offered on a held proposal and a task file", offered)
	}
	sch.call(ctx, f.editor, "ioh.showDiff", map[string]string{"runId": ref.RunID})
	sch.call(ctx, f.editor, "ioh.runs", map[string]any{})
	sch.call(ctx, f.editor, "ioh.trace", map[string]string{"runId": ref.RunID})
	if res := sch.call(ctx, f.editor, "ioh.approve", map[string]string{"runId": ref.RunID}); !strings.Contains(string(res), `"applied"`) {
		t.Errorf("approve answered %s", res)
	}
	f.awaitEnd(ctx, ref.RunID)
	sch.call(ctx, f.editor, "ioh.cancel", map[string]string{"runId": ref.RunID})
	sch.call(ctx, f.editor, "ioh.clearTrace", map[string]string{"runId": ref.RunID})
}
