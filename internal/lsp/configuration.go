package lsp

import (
	"context"
	"encoding/json"

	"go.lsp.dev/protocol"
)

// Editor settings (section `ioh`, the same keys as the user config) come
// from initializationOptions.ioh, workspace/configuration and
// workspace/didChangeConfiguration. A change applies to runs started
// afterwards: the engines are rebuilt with the new settings.

// pullConfiguration asks the client for section `ioh`.
func (s *Server) pullConfiguration(ctx context.Context) {
	section := "ioh"
	res, err := s.client.Configuration(ctx, &protocol.ConfigurationParams{
		Items: []protocol.ConfigurationItem{{Section: &section}},
	})
	if err != nil {
		s.log.Warn("workspace/configuration", "err", err)
		return
	}
	if len(res) == 0 {
		return
	}
	s.setSettings(json.RawMessage(res[0]))
}

// setSettings replaces the editor settings when they are a JSON object.
func (s *Server) setSettings(raw json.RawMessage) {
	var probe map[string]json.RawMessage
	if len(raw) == 0 || string(raw) == "null" || json.Unmarshal(raw, &probe) != nil {
		return
	}
	s.mu.Lock()
	s.settings = append(json.RawMessage(nil), raw...)
	s.mu.Unlock()
	s.eng.retire()
	s.log.Info("editor settings updated")
}

// DidChangeConfiguration takes pushed settings ({"ioh": {...}}) or, when
// the client sends none, pulls them.
func (s *Server) DidChangeConfiguration(ctx context.Context, p *protocol.DidChangeConfigurationParams) error {
	var pushed struct {
		Ioh json.RawMessage `json:"ioh"`
	}
	if len(p.Settings) > 0 && json.Unmarshal(p.Settings, &pushed) == nil && len(pushed.Ioh) > 0 && string(pushed.Ioh) != "null" {
		s.setSettings(pushed.Ioh)
		return nil
	}
	s.mu.Lock()
	pull := s.caps.configuration
	s.mu.Unlock()
	if pull {
		go s.pullConfiguration(ctx)
	}
	return nil
}
