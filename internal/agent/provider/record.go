package provider

import (
	"context"
	"fmt"
	"sync"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/provider/replay"
)

// Recorder wraps a provider and records every successful turn into a
// replay cassette, rewriting the file atomically after each turn. A turn
// is stored at the index replay will ask for it (the number of assistant
// messages in the request), so a resumed run overwrites what it redoes;
// a root request at turn 0 starts a fresh cassette.
type Recorder struct {
	inner model.Provider
	path  string

	mu sync.Mutex
	c  replay.Cassette
}

// NewRecorder returns a recorder writing to path. An existing cassette at
// path is continued (for resume); otherwise recording starts empty.
func NewRecorder(inner model.Provider, path string) *Recorder {
	r := &Recorder{inner: inner, path: path, c: replay.Cassette{Version: replay.Version}}
	if c, err := replay.Load(path); err == nil {
		r.c = *c
	}
	return r
}

// Name implements model.Provider.
func (r *Recorder) Name() string { return r.inner.Name() }

// Targets implements model.Targeter for the recorded provider.
func (r *Recorder) Targets() []model.Target {
	if t, ok := r.inner.(model.Targeter); ok {
		return t.Targets()
	}
	return []model.Target{{Provider: r.inner.Name(), ReportsCost: model.ReportsCost(r.inner)}}
}

// Complete implements model.Provider.
func (r *Recorder) Complete(ctx context.Context, req *model.Request) (*model.Response, error) {
	resp, err := r.inner.Complete(ctx, req)
	if err != nil {
		return nil, err
	}
	turn := replay.Turn{
		Text: resp.Text, Usage: resp.Usage, StopReason: resp.StopReason,
		Provider: resp.Provider, Model: resp.Model, CostUSD: resp.CostUSD,
	}
	for _, c := range resp.ToolCalls {
		turn.ToolCalls = append(turn.ToolCalls, replay.Call{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	idx := replay.TurnIndex(req)
	r.mu.Lock()
	defer r.mu.Unlock()
	if req.Agent == "" {
		if idx == 0 {
			r.c = replay.Cassette{Version: replay.Version}
		}
		r.c.Turns = place(r.c.Turns, idx, turn)
	} else {
		if r.c.Children == nil {
			r.c.Children = map[string][]replay.Turn{}
		}
		r.c.Children[req.Agent] = place(r.c.Children[req.Agent], idx, turn)
	}
	if err := r.c.Save(r.path); err != nil {
		return nil, fmt.Errorf("record turn: %w", err)
	}
	return resp, nil
}

// place puts t at index i, dropping anything recorded after it.
func place(turns []replay.Turn, i int, t replay.Turn) []replay.Turn {
	if i < len(turns) {
		turns = turns[:i]
	}
	return append(turns, t)
}
