package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
)

// SpawnParams are spawn_agent's arguments.
type SpawnParams struct {
	Goal string `json:"goal"`
	// Mode is "edit" (the default: the child changes files) or "explore"
	// (read-only tools and run; its finish summary is its findings).
	Mode   string       `json:"mode,omitempty"`
	Scope  *SpawnScope  `json:"scope,omitempty"`
	Budget *SpawnBudget `json:"budget,omitempty"`
}

// SpawnScope narrows the child's writes (inside the parent's scope).
type SpawnScope struct {
	Write []string `json:"write,omitempty"`
}

// SpawnBudget is the share the child asks for; zero fields take a default
// share of what the parent has left.
type SpawnBudget struct {
	Steps   int     `json:"steps,omitempty"`
	Tokens  int64   `json:"tokens,omitempty"`
	CostUSD float64 `json:"cost_usd,omitempty"`
	Wall    string  `json:"wall,omitempty"`
}

// WallDuration parses Wall ("" is 0).
func (b *SpawnBudget) WallDuration() (time.Duration, error) {
	if b == nil || b.Wall == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(b.Wall)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("bad arguments: budget.wall %q is not a Go duration", b.Wall)
	}
	return d, nil
}

// SpawnName is the sub-agent tool's name.
const SpawnName = "spawn_agent"

// Spawn modes.
const (
	SpawnEdit    = "edit"
	SpawnExplore = "explore"
)

const spawnDesc = "Start a sub-agent on a narrower goal. mode explore: it only reads, searches and runs commands, and reports what it found (use it to keep a wide search out of your context); mode edit (the default): it works on a copy of the current change set within an optional write scope (inside yours), and its changes merge into yours when it ends. It gets a share of your budget (by default a quarter of your steps), the project instructions and the context files; its findings or summary and the files it changed come back as this call's result. Several spawn_agent calls in one turn run concurrently."

const spawnSchema = `{"type":"object","properties":{"goal":{"type":"string"},"mode":{"type":"string","enum":["edit","explore"]},"scope":{"type":"object","properties":{"write":{"type":"array","items":{"type":"string"}}},"additionalProperties":false},"budget":{"type":"object","properties":{"steps":{"type":"integer","minimum":1},"tokens":{"type":"integer","minimum":1},"cost_usd":{"type":"number","minimum":0},"wall":{"type":"string"}},"additionalProperties":false}},"required":["goal"],"additionalProperties":false}`

type spawnAgent struct{ sp Spawner }

// NewSpawnAgent returns spawn_agent backed by sp.
func NewSpawnAgent(sp Spawner) Tool { return spawnAgent{sp} }

func (spawnAgent) Spec() model.ToolSpec { return spec(SpawnName, spawnDesc, spawnSchema) }
func (spawnAgent) ReadOnly() bool       { return false }

// Acts: the child's own calls are checked by its own policy.
func (spawnAgent) Acts(args json.RawMessage) ([]Act, error) {
	_, err := ParseSpawn(args)
	return nil, err
}

func (t spawnAgent) Call(ctx context.Context, args json.RawMessage) (Result, error) {
	p, err := ParseSpawn(args)
	if err != nil {
		return Errorf("%v", err), nil
	}
	return t.sp.Spawn(ctx, p)
}

// ParseSpawn decodes and checks spawn_agent's arguments.
func ParseSpawn(args json.RawMessage) (SpawnParams, error) {
	var p SpawnParams
	if err := decode(args, &p); err != nil {
		return p, err
	}
	if strings.TrimSpace(p.Goal) == "" {
		return p, fmt.Errorf("bad arguments: goal is required")
	}
	if _, err := p.Budget.WallDuration(); err != nil {
		return p, err
	}
	switch p.Mode {
	case "", SpawnEdit, SpawnExplore:
	default:
		return p, fmt.Errorf("bad arguments: mode %q is neither %q nor %q", p.Mode, SpawnEdit, SpawnExplore)
	}
	return p, nil
}
