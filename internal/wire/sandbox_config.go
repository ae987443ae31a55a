package wire

import (
	"github.com/ioh-lsp/ioh-lsp/internal/agent/config"
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox"
)

// SandboxSettings is what the configuration's `sandbox` key gives every
// contained run: masked paths, writable caches and readable paths (all
// absolute), default limits (a zero field leaves the sandbox's default),
// and the required tier ("" when the configuration sets none).
type SandboxSettings struct {
	Masked, Writable, Readable []string
	Limits                     sandbox.Limits
	Require                    string
}

// SandboxFromConfig maps cfg's `sandbox` key to the sandbox's terms. Agent
// runs (NewHarness) and `ioh-lsp sandbox run` both take their settings
// here, so a masked path or a limit in the user config binds both alike.
func SandboxFromConfig(cfg *config.Config) SandboxSettings {
	s, l := cfg.Sandbox, cfg.Sandbox.Limits
	return SandboxSettings{
		Masked: s.Masked, Writable: s.Writable, Readable: s.Readable,
		Limits:  sandbox.Limits{Wall: l.Wall, CPU: l.CPU, Memory: l.Memory, Procs: l.Procs, Files: l.Files, Output: l.Output},
		Require: s.Require,
	}
}
