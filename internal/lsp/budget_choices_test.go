package lsp

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
)

// raiseChoices raises the limit that stopped the run (every limit when the
// trace names none) by half and by double; wall time adds the extra time
// to what the run has already spent.
func TestRaiseChoices(t *testing.T) {
	lim := contract.Budget{Steps: 40, Tokens: 400000, CostUSD: 2, Wall: 15 * time.Minute}
	type choice struct {
		Title string
		Raise contract.Budget
	}
	tests := []struct {
		limit   agent.Limit
		elapsed time.Duration
		want    []choice
	}{
		{agent.LimitSteps, 0, []choice{{"+50%: 60 steps", contract.Budget{Steps: 60}}, {"×2: 80 steps", contract.Budget{Steps: 80}}}},
		{agent.LimitTokens, 0, []choice{{"+50%: 600000 tokens", contract.Budget{Tokens: 600000}}, {"×2: 800000 tokens", contract.Budget{Tokens: 800000}}}},
		{agent.LimitCost, 0, []choice{{"+50%: $3.00", contract.Budget{CostUSD: 3}}, {"×2: $4.00", contract.Budget{CostUSD: 4}}}},
		{agent.LimitWall, 2 * time.Hour, []choice{
			{"+50%: 2h7m30s wall (7m30s more)", contract.Budget{Wall: 2*time.Hour + 7*time.Minute + 30*time.Second}},
			{"×2: 2h15m0s wall (15m0s more)", contract.Budget{Wall: 2*time.Hour + 15*time.Minute}}}},
		{"", 0, []choice{
			{"+50%: 60 steps, 600000 tokens, $3.00, 22m30s wall (7m30s more)", contract.Budget{Steps: 60, Tokens: 600000, CostUSD: 3, Wall: 22*time.Minute + 30*time.Second}},
			{"×2: 80 steps, 800000 tokens, $4.00, 30m0s wall (15m0s more)", contract.Budget{Steps: 80, Tokens: 800000, CostUSD: 4, Wall: 30 * time.Minute}}}},
	}
	for _, tt := range tests {
		var got []choice
		for _, c := range raiseChoices(stoppedRun{spend: agent.Spend{Limits: lim, Elapsed: tt.elapsed}, limit: tt.limit}) {
			got = append(got, choice{c.title, c.raise})
		}
		if diff := cmp.Diff(got, tt.want); diff != "" {
			t.Errorf("limit %q (-got +want):\n%s", tt.limit, diff)
		}
	}
	if got := raiseChoices(stoppedRun{spend: agent.Spend{Limits: contract.Budget{Steps: 5}}, limit: agent.LimitCost}); len(got) != 0 {
		t.Errorf("a cost raise offered for a run without a dollar limit: %+v", got)
	}
}
