package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/approve"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/config"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
)

// The approval policy as session modes (ACP's session/set_mode): the
// answers `--approve ask|auto|never` gives on the command line, given in
// the panel. A mode holds for the prompts that start after it is set.
const (
	modeAsk   = "ask"
	modeAuto  = "auto"
	modeNever = "never"
)

// Config option ids (session/set_config_option).
const (
	configMode  = "mode"
	configModel = "model"
)

const (
	methodSetMode         = "session/set_mode"
	methodSetConfigOption = "session/set_config_option"
)

var sessionModes = []sessionMode{
	{ID: modeAsk, Name: "Ask", Description: "Ask in the panel before each Ask-tier act and before writing the verified change."},
	{ID: modeAuto, Name: "Auto", Description: "Write a verified change without asking, unless it touches its own checks or files that run on your machine later; Ask-tier acts are denied and the model is told why."},
	{ID: modeNever, Name: "Never write", Description: "Write nothing: the verified change stays pending for /approve; Ask-tier acts are denied and the model is told why."},
}

type sessionMode struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

type sessionModeState struct {
	CurrentModeID  string        `json:"currentModeId"`
	AvailableModes []sessionMode `json:"availableModes"`
}

// configOption is a select config option (the only kind offered here).
type configOption struct {
	ID           string         `json:"id"`
	Name         string         `json:"name"`
	Description  string         `json:"description,omitempty"`
	Category     string         `json:"category,omitempty"`
	Type         string         `json:"type"`
	CurrentValue string         `json:"currentValue"`
	Options      []configChoice `json:"options"`
}

type configChoice struct {
	Value       string `json:"value"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// ModelChoice is one model a session can run on: the configuration's
// model or one of its fallbacks (ModelChoices).
type ModelChoice struct {
	ID          string
	Name        string
	Description string
}

// sessionSetup is what session/new, session/load and session/resume
// answer besides the id: the modes and the config options.
type sessionSetup struct {
	Modes         sessionModeState `json:"modes"`
	ConfigOptions []configOption   `json:"configOptions"`
}

type setModeParams struct {
	SessionID string `json:"sessionId"`
	ModeID    string `json:"modeId"`
}

type setConfigOptionParams struct {
	SessionID string          `json:"sessionId"`
	ConfigID  string          `json:"configId"`
	Type      string          `json:"type,omitempty"`
	Value     json.RawMessage `json:"value"`
}

type currentModeUpdate struct {
	SessionUpdate string `json:"sessionUpdate"`
	CurrentModeID string `json:"currentModeId"`
}

type configOptionUpdate struct {
	SessionUpdate string         `json:"sessionUpdate"`
	ConfigOptions []configOption `json:"configOptions"`
}

func validMode(m string) bool {
	for _, x := range sessionModes {
		if x.ID == m {
			return true
		}
	}
	return false
}

// initialMode is a session's mode when it opens: the one it was left in,
// else the configuration's `approve`, else ask.
func initialMode(rec *record, eng *Engine) string {
	switch {
	case validMode(rec.Mode):
		return rec.Mode
	case validMode(eng.Approve):
		return eng.Approve
	}
	return modeAsk
}

// setup is the session's modes and config options as they are now.
func (ss *session) setup() sessionSetup {
	ss.mu.Lock()
	mode := ss.rec.Mode
	ss.mu.Unlock()
	return sessionSetup{Modes: sessionModeState{CurrentModeID: mode, AvailableModes: sessionModes}, ConfigOptions: ss.configOptions()}
}

func (ss *session) configOptions() []configOption {
	ss.mu.Lock()
	mode, chosen := ss.rec.Mode, ss.rec.Model
	ss.mu.Unlock()
	modes := configOption{ID: configMode, Name: "Approval", Category: "mode", Type: "select", CurrentValue: mode,
		Description: "Who answers what the policy asks about, and whether a verified change is written (as --approve on the command line)."}
	for _, m := range sessionModes {
		modes.Options = append(modes.Options, configChoice{Value: m.ID, Name: m.Name, Description: m.Description})
	}
	models := configOption{ID: configModel, Name: "Model", Category: "model", Type: "select",
		Description: "The model of the next prompts, from your configuration (model and model.fallback); a task file that names its own model keeps it."}
	for _, m := range ss.eng.Models {
		models.Options = append(models.Options, configChoice{Value: m.ID, Name: m.Name, Description: m.Description})
	}
	models.CurrentValue = chosen
	if chosen == "" && len(ss.eng.Models) > 0 {
		models.CurrentValue = ss.eng.Models[0].ID
	}
	if len(models.Options) == 0 {
		return []configOption{modes}
	}
	return []configOption{modes, models}
}

// setMode is session/set_mode.
func (s *Server) setMode(params json.RawMessage) (any, error) {
	var p setModeParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	ss := s.session(p.SessionID)
	if ss == nil {
		return nil, notOpen(p.SessionID)
	}
	if err := ss.changeMode(p.ModeID); err != nil {
		return nil, err
	}
	return struct{}{}, nil
}

// changeMode sets the session's mode, records it and tells the client
// (current_mode_update and the config options that show it).
func (ss *session) changeMode(mode string) error {
	if !validMode(mode) {
		return invalidParams("unknown mode %q: want %s", mode, modeList())
	}
	ss.mu.Lock()
	ss.rec.Mode = mode
	rec := *ss.rec
	ss.mu.Unlock()
	if err := ss.srv.idx.put(&rec); err != nil {
		ss.srv.log.Warn("acp: record session mode", "session", ss.id, "err", err)
	}
	ss.update(currentModeUpdate{SessionUpdate: "current_mode_update", CurrentModeID: mode})
	ss.update(configOptionUpdate{SessionUpdate: "config_option_update", ConfigOptions: ss.configOptions()})
	return nil
}

func modeList() string {
	ids := make([]string, len(sessionModes))
	for i, m := range sessionModes {
		ids[i] = m.ID
	}
	return strings.Join(ids, ", ")
}

// setConfigOption is session/set_config_option: the approval mode, or
// the model (the session's engine is built again on it, so only between
// prompts).
func (s *Server) setConfigOption(ctx context.Context, params json.RawMessage) (any, error) {
	var p setConfigOptionParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	ss := s.session(p.SessionID)
	if ss == nil {
		return nil, notOpen(p.SessionID)
	}
	var value string
	if p.Type == "boolean" || json.Unmarshal(p.Value, &value) != nil {
		return nil, invalidParams("config option %q takes a value id (a string), got %s", p.ConfigID, string(p.Value))
	}
	switch p.ConfigID {
	case configMode:
		if err := ss.changeMode(value); err != nil {
			return nil, err
		}
	case configModel:
		if err := ss.changeModel(ctx, value); err != nil {
			return nil, err
		}
	default:
		return nil, invalidParams("unknown config option %q: want %s or %s", p.ConfigID, configMode, configModel)
	}
	return configOptionUpdate{ConfigOptions: ss.configOptions()}, nil
}

// changeModel builds the session's engine again with the model choice
// id first, and keeps it for the session's later prompts.
func (ss *session) changeModel(ctx context.Context, id string) error {
	known := false
	for _, m := range ss.eng.Models {
		known = known || m.ID == id
	}
	if !known {
		ids := make([]string, len(ss.eng.Models))
		for i, m := range ss.eng.Models {
			ids[i] = m.ID
		}
		return invalidParams("unknown model %q: the configuration offers %s (model and model.fallback in the user config)", id, strings.Join(ids, ", "))
	}
	ss.mu.Lock()
	if ss.cancel != nil || ss.queued > 0 {
		ss.mu.Unlock()
		return invalidParams("session %s has a prompt in flight: choose the model once it ends", ss.id)
	}
	// The engine is replaced under no prompt: one that comes meanwhile
	// is refused (prompt), not run on the engine being closed.
	ss.cancel, ss.reopening = func() {}, true
	defer func() {
		ss.mu.Lock()
		ss.cancel, ss.reopening = nil, false
		ss.mu.Unlock()
	}()
	prev := ss.rec.Model
	was := prev
	if was == "" {
		was = ss.eng.Models[0].ID
	}
	ss.rec.Model = id
	ss.mu.Unlock()
	if err := ss.reopen(ctx); err != nil {
		ss.mu.Lock()
		ss.rec.Model = prev
		ss.mu.Unlock()
		return err
	}
	ss.mu.Lock()
	ss.modelChanged = ss.modelChanged || was != id
	rec := *ss.rec
	ss.mu.Unlock()
	if err := ss.srv.idx.put(&rec); err != nil {
		ss.srv.log.Warn("acp: record session model", "session", ss.id, "err", err)
	}
	return nil
}

// ModelChoices are the models a configuration offers a session: its
// model first, then each fallback, in order.
func ModelChoices(m contract.Model) []ModelChoice {
	out := []ModelChoice{modelChoice(m.Provider, m.Name, m.BaseURL, "the configured model")}
	for i, f := range m.Fallback {
		out = append(out, modelChoice(f.Provider, f.Name, f.BaseURL, fmt.Sprintf("fallback %d of the configuration", i+1)))
	}
	return out
}

func modelChoice(provider, name, baseURL, what string) ModelChoice {
	id := provider + "/" + name
	label := name
	if label == "" {
		label = "the default model"
	}
	if provider == "" {
		provider = "the provider your environment's key selects"
	}
	desc := fmt.Sprintf("%s: %s of %s", what, label, provider)
	if baseURL != "" {
		desc += " at " + baseURL
	}
	return ModelChoice{ID: id, Name: label + " (" + provider + ")", Description: desc}
}

// WithModel returns m with choice id (of ModelChoices(m)) as its model
// and the others as its fallbacks, in their order.
func WithModel(m contract.Model, id string) (contract.Model, error) {
	all := append([]contract.Fallback{{Provider: m.Provider, Name: m.Name, BaseURL: m.BaseURL, APIKeyEnv: m.APIKeyEnv}}, m.Fallback...)
	for i, f := range all {
		if f.Provider+"/"+f.Name != id {
			continue
		}
		out := m
		out.Provider, out.Name, out.BaseURL, out.APIKeyEnv = f.Provider, f.Name, f.BaseURL, f.APIKeyEnv
		out.Fallback = append(append([]contract.Fallback(nil), all[:i]...), all[i+1:]...)
		return out, nil
	}
	return m, fmt.Errorf("model %q is not among the configuration's (model and model.fallback)", id)
}

// ChooseModel applies a session's model choice (EngineRequest.Model) to
// the configuration its engine is built from, and returns the choices
// the session offers (those of the configuration as written). A choice
// the configuration no longer offers (a session loaded after it
// changed) keeps the configured model, with a warning in log.
func ChooseModel(cfg *config.Config, choice string, log *slog.Logger) []ModelChoice {
	choices := ModelChoices(cfg.Model)
	if choice == "" {
		return choices
	}
	m, err := WithModel(cfg.Model, choice)
	if err != nil {
		if log != nil {
			log.Warn("acp: " + err.Error() + "; the session runs on the configured model")
		}
		return choices
	}
	cfg.Model = m
	return choices
}

// modeApprover is what answers for a session in mode: the panel (ask),
// or the command line's automatic approvers, named as the panel's mode
// in what the model reads.
func (a approver) mode() string {
	a.ss.mu.Lock()
	defer a.ss.mu.Unlock()
	return a.ss.runMode
}

func automatic(mode string) agent.Approver {
	if mode == modeAuto {
		return approve.Auto{}
	}
	return approve.Never{}
}

// byMode renames the denier of an automatic denial after the mode that
// gave it, with the way to be asked instead.
func byMode(d agent.Decision, mode string) agent.Decision {
	if d.Answer == agent.Deny {
		d.By = "the session's " + mode + " mode"
		d.Reason = strings.ReplaceAll(d.Reason, "(--approve never)", "(the session's mode is never)")
		d.Reason += "; in the panel, the mode ask asks the user instead"
	}
	return d
}

func notOpen(id string) *RPCError {
	return invalidParams("session %q is not open (session/new or session/load it first)", id)
}
