package event

// InstructionFile is one project-instruction file (AGENTS.md, CLAUDE.md,
// GEMINI.md) a run found, as its run_started event names it: Shown false
// with a Reason when the read policy kept it out of the prompt, Cut when
// the 32 KiB cap cut it.
type InstructionFile struct {
	Path   string `json:"path"`
	Bytes  int    `json:"bytes"`
	Shown  bool   `json:"shown"`
	Cut    bool   `json:"cut,omitempty"`
	Reason string `json:"reason,omitempty"`
}
