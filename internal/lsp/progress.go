package lsp

import (
	"context"
	"fmt"
	"time"

	"go.lsp.dev/protocol"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
)

// Each run is one cancellable work-done progress (STYLE 13): created with
// window/workDoneProgress/create when the client supports it, begun,
// reported at every step and ended with completed, failed or cancelled.
// Clients without work-done progress get window/showMessage at the start
// and the end. Everything goes through the outbox, in order.

func progressToken(id string) string { return "ioh/" + id }

// clientCallTimeout bounds the calls the outbox makes to the client
// (progress creation, lens refresh), so an unresponsive client cannot
// stall the notifications queued behind them.
const clientCallTimeout = 10 * time.Second

func (s *Server) progressBegin(id string) {
	s.mu.Lock()
	supported := s.caps.workDoneProgress
	s.mu.Unlock()
	st, _ := s.runs.lookup(id)
	title := "ioh: " + oneLine(st.goal, 80)
	if !supported {
		s.post(func(ctx context.Context) {
			_ = s.client.ShowMessage(ctx, &protocol.ShowMessageParams{
				Type: protocol.MessageTypeInfo, Message: fmt.Sprintf("%s (run %s) started", title, id),
			})
		})
		return
	}
	token := progressToken(id)
	s.runs.with(id, func(st *runState) { st.token = token })
	yes := true
	s.post(func(ctx context.Context) {
		cctx, cancel := context.WithTimeout(ctx, clientCallTimeout)
		err := s.client.WorkDoneProgressCreate(cctx, &protocol.WorkDoneProgressCreateParams{Token: protocol.String(token)})
		cancel()
		if err != nil {
			// Without a created token the client would drop every report:
			// fall back to messages, as for clients without progress.
			s.log.Warn("workDoneProgress/create", "run", id, "err", err)
			s.runs.with(id, func(st *runState) { st.token = "" })
			_ = s.client.ShowMessage(ctx, &protocol.ShowMessageParams{
				Type: protocol.MessageTypeInfo, Message: fmt.Sprintf("%s (run %s) started", title, id),
			})
			return
		}
		msg := "run " + id
		s.sendProgress(ctx, token, &protocol.WorkDoneProgressBegin{Kind: "begin", Title: title, Cancellable: &yes, Message: &msg})
	})
}

// progressReport reports the run's spend against its limits (step,
// tokens and cost, sub-agents included; a cost that could not be priced
// is shown as unknown) and the current tool.
func (s *Server) progressReport(id string) {
	st, ok := s.runs.lookup(id)
	if !ok || st.token == "" {
		return
	}
	msg := progressText(st)
	if st.tool != "" {
		msg += " · " + st.tool
	}
	token := st.token
	if !s.runs.setLastReport(id, msg) {
		return // nothing new to say
	}
	s.post(func(ctx context.Context) {
		s.sendProgress(ctx, token, &protocol.WorkDoneProgressReport{Kind: "report", Message: &msg})
	})
}

// progressEnd ends the run's progress with how it ended.
func (s *Server) progressEnd(id string, res *agent.Result) {
	st, _ := s.runs.lookup(id)
	msg := endMessage(id, res)
	if st.token == "" {
		typ := protocol.MessageTypeInfo
		if res == nil || res.Outcome.ExitCode() != 0 {
			typ = protocol.MessageTypeWarning
		}
		s.post(func(ctx context.Context) {
			_ = s.client.ShowMessage(ctx, &protocol.ShowMessageParams{Type: typ, Message: msg})
		})
		return
	}
	token := st.token
	s.post(func(ctx context.Context) {
		s.sendProgress(ctx, token, &protocol.WorkDoneProgressEnd{Kind: "end", Message: &msg})
	})
}

// endMessage says completed, failed or cancelled, with the outcome.
func endMessage(id string, res *agent.Result) string {
	if res == nil {
		return fmt.Sprintf("failed: run %s ended without a result", id)
	}
	word := "completed"
	switch res.Outcome {
	case agent.OutcomeCancelled:
		word = "cancelled"
	case agent.OutcomeApplied, agent.OutcomeVerified, agent.OutcomeUnverified, agent.OutcomeAwaitingApproval:
	default:
		word = "failed"
	}
	cost := fmt.Sprintf("$%.4f", res.CostUSD)
	if res.Unpriced > 0 {
		cost = "cost unknown"
	}
	msg := fmt.Sprintf("%s: %s (run %s, %d steps, %s)", word, res.Outcome, id, res.Steps, cost)
	if res.Err != nil {
		msg += ": " + oneLine(res.Err.Error(), 200)
	}
	return msg
}

func (s *Server) sendProgress(ctx context.Context, token string, v any) {
	raw, err := protocol.Marshal(v)
	if err != nil {
		s.log.Error("marshal progress", "err", err)
		return
	}
	if err := s.client.Progress(ctx, &protocol.ProgressParams{Token: protocol.String(token), Value: raw}); err != nil {
		s.log.Debug("$/progress", "err", err)
	}
}

// WorkDoneProgressCancel cancels the run behind the token.
func (s *Server) WorkDoneProgressCancel(ctx context.Context, p *protocol.WorkDoneProgressCancelParams) error {
	var token string
	switch t := p.Token.(type) {
	case protocol.String:
		token = string(t)
	case protocol.Integer:
		token = fmt.Sprint(int32(t))
	}
	id, ok := s.runs.byToken(token)
	if !ok {
		return fmt.Errorf("cancel progress %q: no such run", token)
	}
	s.cancelRun(id)
	return nil
}

// progressText is "step 3/40 · 1200/400000 tokens (+9000 cached) ·
// $0.0200/$2.00": the run's running totals against each limit it has
// ("cost unknown" when a call could not be priced), the run's cache reads
// beside the tokens the budget counts.
func progressText(st runState) string {
	b := st.limits
	msg := fmt.Sprintf("step %d", st.steps)
	if b.Steps > 0 {
		msg += fmt.Sprintf("/%d", b.Steps)
	}
	msg += fmt.Sprintf(" · %d", st.tokens)
	if b.Tokens > 0 {
		msg += fmt.Sprintf("/%d", b.Tokens)
	}
	msg += " tokens"
	if st.cached > 0 {
		msg += fmt.Sprintf(" (+%d cached)", st.cached)
	}
	msg += " · "
	if st.unpriced {
		msg += "cost unknown"
	} else {
		msg += fmt.Sprintf("$%.4f", st.cost)
	}
	if b.CostUSD > 0 {
		msg += fmt.Sprintf("/$%.2f", b.CostUSD)
	}
	return msg
}

// oneLine shortens s to one line of at most n runes.
func oneLine(s string, n int) string {
	out := []rune{}
	for _, r := range s {
		if r == '\n' || r == '\r' {
			r = ' '
		}
		if len(out) == n {
			return string(out) + "…"
		}
		out = append(out, r)
	}
	return string(out)
}
