package ioh

import (
	"context"
	"errors"
	"log/slog"
	"os"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/approve"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox"
	"github.com/ioh-lsp/ioh-lsp/internal/wire"
)

// Contract is a parsed task contract (docs/contract.md).
type Contract = contract.Contract

// Result is a run's end state: its Outcome, the change, the checks'
// report, the usage and cost.
type Result = agent.Result

// Outcome is how a run ended ("applied", "verification_failed", …);
// Outcome.ExitCode is `ioh-lsp run`'s exit code for it.
type Outcome = agent.Outcome

// Event is one step of a run as it happens (docs/trace-json.md).
type Event = event.Event

// Init runs this process as a sandbox stage when it was started as one,
// and then reports true: main must return at once. Call it first in main.
func Init() bool { return sandbox.Init() }

// ParseContract parses a contract's YAML or JSON; name (a file name)
// only labels the errors, which carry file:line:col and the field.
func ParseContract(name string, data []byte) (*Contract, error) {
	return contract.Parse(data, name)
}

// LoadContract reads and parses the contract file at path.
func LoadContract(path string) (*Contract, error) { return contract.Load(path) }

// Config says how to build an engine.
type Config struct {
	// Root is the workspace directory (required).
	Root string
	// Approve decides what happens to a verified change: "auto" applies
	// one that leaves its own checks alone, "never" leaves every change
	// pending, "ask" asks on the terminal. Empty means "never".
	Approve string
	// Cassette replays a recorded session instead of calling a model
	// (the replay provider: no network, no API key).
	Cassette string
	// Provider and Model override the contract's model.
	Provider, Model string
	// Events receives every event of every run; nil drops them (the
	// trace store keeps them all).
	Events func(Event)
	// Logger gets warnings (ignored settings, a weaker sandbox tier);
	// nil discards them.
	Logger *slog.Logger
	// Sandbox runs the engine's commands and checks instead of the OS
	// sandbox the configuration describes.
	Sandbox *Sandbox
}

// Engine runs contracts in one workspace, with the configuration of the
// user and of the workspace (~/.config/ioh/config.yaml,
// .ioh/config.yaml) and the trace store under the state directory.
type Engine struct {
	eng *wire.Engine
}

// New builds the engine cfg describes.
func New(ctx context.Context, cfg Config) (*Engine, error) {
	if cfg.Root == "" {
		return nil, errors.New("ioh.New: Config.Root is empty: name the workspace directory")
	}
	mode := cfg.Approve
	if mode == "" {
		mode = "never"
	}
	appr, err := approve.ForMode(mode, os.Stdin, os.Stderr)
	if err != nil {
		return nil, err
	}
	o := wire.Options{
		Root: cfg.Root, Approver: appr, Logger: cfg.Logger,
		Overrides: wire.Overrides{Provider: cfg.Provider, Model: cfg.Model, Cassette: cfg.Cassette},
	}
	if cfg.Events != nil {
		o.Sink = event.SinkFunc(cfg.Events)
	}
	if cfg.Sandbox != nil {
		o.Sandbox = cfg.Sandbox
	}
	eng, err := wire.NewHarness(ctx, o)
	if err != nil {
		return nil, err
	}
	return &Engine{eng: eng}, nil
}

// Run runs c to its end and returns the result; ctx bounds the whole
// run. A run that could not start (a refused contract, no provider) is
// an error; one that ran and failed is a Result with its Outcome.
func (e *Engine) Run(ctx context.Context, c *Contract) (*Result, error) {
	run, err := e.eng.Harness.Start(ctx, c)
	if err != nil {
		return nil, err
	}
	return run.Wait(), nil
}

// Root is the workspace's directory, symlinks resolved.
func (e *Engine) Root() string { return e.eng.Root.Dir() }

// Harness is the engine's agent harness, for what Run does not cover
// (Approve, Reject, Resume, Cancel by run id).
func (e *Engine) Harness() *agent.Harness { return e.eng.Harness }

// Close releases the trace store and stops the engine's MCP servers.
func (e *Engine) Close() { e.eng.Close() }
