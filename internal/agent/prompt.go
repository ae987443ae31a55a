package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
)

// maxContextBytes caps the context files' content in the system prompt.
const maxContextBytes = 64 << 10

// systemPrompt is the stable prefix of every request: role, workflow,
// goal, constraints, scope, checks, the project instructions and the
// context files. The tools' specs are sent beside it, not repeated here.
// It depends only on the contract and the workspace at the run's start,
// so every request of a run shares it byte for byte (cacheable).
func (a *agentRun) systemPrompt(ctx context.Context) string {
	var b strings.Builder
	b.WriteString("You are a coding agent working in a software workspace through tools. ")
	b.WriteString("Your edits go into a pending change set (reads see it); nothing reaches the real files until the change is verified and approved. ")
	b.WriteString("Tool failures and policy denials come back as results: read them and adapt.\n\n")
	b.WriteString(a.workflow())
	fmt.Fprintf(&b, "\n# Goal\n%s\n", a.c.Goal)
	if len(a.c.Constraints) > 0 {
		b.WriteString("\n# Constraints\n")
		for _, c := range a.c.Constraints {
			fmt.Fprintf(&b, "- %s\n", c)
		}
	}
	if len(a.c.Scope.Write) > 0 {
		fmt.Fprintf(&b, "\n# Scope\nYou may write only paths matching: %s\n", strings.Join(a.c.Scope.Write, ", "))
	}
	if len(a.c.Verify.Protect) > 0 {
		fmt.Fprintf(&b, "\nThese files are protected (you may not write them): %s\n", strings.Join(a.c.Verify.Protect, ", "))
	}
	if len(a.c.Verify.Checks) > 0 {
		b.WriteString("\n# Verification\nWhen you call finish, these checks run in a sandbox over the workspace with your changes; all must pass:\n")
		for _, c := range a.c.Verify.Checks {
			cmd := c.Shell
			if cmd == "" {
				cmd = strings.Join(c.Run, " ")
			}
			fmt.Fprintf(&b, "- %s: %s (expect exit %d)\n", c.Name, cmd, c.ExpectExit)
		}
	}
	a.instrDirs = a.instructionDirs(a.c.Goal)
	instr, files := a.projectInstructions(a.instrDirs)
	a.instrFiles = files
	if instr != "" {
		b.WriteString("\n# Project instructions\nThe repository's instructions for agents (a deeper directory's are the more specific):\n")
		b.WriteString(instr)
	}
	if files := a.contextFiles(ctx, maxContextBytes-len(instr)); files != "" {
		b.WriteString("\n# Context files\n")
		b.WriteString(files)
	}
	return b.String()
}

// workflow is the system prompt's short method: how a task goes from
// the failure to finish, and how to make an edit apply.
func (a *agentRun) workflow() string {
	if a.exploring() {
		return `# Explore mode
You are a sub-agent that explores: you read, search and run commands, and change no file. Find what the goal asks: the files, functions and lines involved, how the code behaves, what fails and why. Read ranges, not whole large files.
Then call finish with your findings as the summary: what you found, with paths and line numbers, and what you could not find. Your parent sees only that summary.
Older tool results may be shown as one-line stubs to save context: call the tool again if you need one.
`
	}
	return `# Workflow
1. Reproduce: read the failing output in the first message, or run the check.
2. Locate: grep or find the code involved.
3. Read the relevant ranges (read_file with offset and limit), not whole large files.
4. Edit with exact text: copy the old text from read_file's output without its line numbers, with 2-3 lines of context so it is unique, and keep the file's indentation (tabs stay tabs).
5. Run the check (run) and fix what fails.
6. Call finish with a short summary of what you changed and why.
Older tool results may be shown as one-line stubs to save context: call the tool again if you need one.
`
}

// contextFiles expands the contract's context globs (as of the run's
// start) and returns their content, capped. Each file is judged as a
// read_file of it would be (checkRead): a contract, which a repository
// may have written, cannot put a file the policy guards (.env, keys, a
// denied path) into the prompt by naming it; such a file is named, not
// shown, so the model can read_file it and the user be asked then.
func (a *agentRun) contextFiles(ctx context.Context, limit int) string {
	var b strings.Builder
	seen := map[string]bool{}
	for _, g := range a.c.Context {
		paths, err := a.cs.Find(ctx, g)
		if err != nil || len(paths) == 0 {
			fmt.Fprintf(&b, "(no file matches %s)\n", g)
			continue
		}
		for _, p := range paths {
			if seen[p] {
				continue
			}
			seen[p] = true
			resolved, err := a.cs.Key(p)
			if err != nil {
				continue
			}
			switch v := a.checkRead(p, resolved); v.Effect {
			case policy.Deny:
				fmt.Fprintf(&b, "## %s\n(not shown: the policy does not let you read it)\n", p)
				continue
			case policy.Ask:
				fmt.Fprintf(&b, "## %s\n(not shown: reading it needs the user's approval; use read_file to ask)\n", p)
				continue
			}
			data, err := a.cs.ReadFile(resolved)
			if err != nil {
				continue
			}
			if b.Len()+len(data) > limit {
				fmt.Fprintf(&b, "## %s\n(not shown: the context limit is reached; use read_file)\n", p)
				continue
			}
			fmt.Fprintf(&b, "## %s\n```\n%s\n```\n", p, strings.TrimRight(string(data), "\n"))
		}
	}
	return b.String()
}

// firstMessage is the first user message: the orientation (a map of
// the workspace, its languages and check commands, git status) and what
// to do first. It is built once, at the run's start, and stays the same
// for the whole run (the cached prefix).
func (a *agentRun) firstMessage(ctx context.Context) string {
	var b strings.Builder
	if o := a.orientation(ctx); o != "" {
		b.WriteString(o)
	}
	if red := a.redSummary(ctx); red != "" { // redphase.go: the failing checks, run before the first call
		b.WriteString(strings.TrimLeft(red, "\n"))
	}
	if b.Len() > 0 {
		b.WriteString("\n")
	}
	if a.exploring() {
		b.WriteString("Explore for the goal in the system prompt through the tools; call finish with your findings.")
	} else {
		b.WriteString("Work on the goal in the system prompt through the tools, following the workflow; call finish when it is done.")
	}
	return b.String()
}
