package config

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
)

// TestContractBudgetWrittenAsDefaultIsKept: the configuration's budget
// fills exactly the fields the contract omitted. A field written equal to
// the contract default is the contract's choice and stands (the config
// step used to compare with the default and replace it); an omitted one
// takes the configuration's value.
func TestContractBudgetWrittenAsDefaultIsKept(t *testing.T) {
	o, _ := setup(t, true)
	o.Editor = json.RawMessage(`{"budget": {"tokens": 1000, "cost_usd": 0.5}}`)
	cfg, err := Load(o)
	if err != nil {
		t.Fatal(err)
	}
	// The layers merge to steps 5 (workspace), tokens 1000 and cost 0.5
	// (editor), wall 10m (user).
	conf := contract.Budget{Steps: 5, Tokens: 1000, CostUSD: 0.5, Wall: 10 * time.Minute}
	if diff := cmp.Diff(cfg.Budget, conf); diff != "" {
		t.Fatalf("configuration budget (-got +want):\n%s", diff)
	}
	task := filepath.Join(o.WorkspaceRoot, "t.ioh.yaml")
	// steps and cost_usd written exactly as the defaults; tokens and wall
	// omitted.
	write(t, task, "goal: g\nbudget: {steps: 50, cost_usd: 5.00}\n")
	if contract.DefaultSteps != 50 || contract.DefaultCostUSD != 5.00 {
		t.Fatalf("the defaults changed (steps %d, cost %v): write them in the task above", contract.DefaultSteps, contract.DefaultCostUSD)
	}
	k, err := contract.Load(task)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(k.Omitted, contract.BudgetOmitted{Tokens: true, Wall: true}); diff != "" {
		t.Errorf("omitted (-got +want):\n%s", diff)
	}
	if _, err := cfg.PrepareContract(k); err != nil {
		t.Fatal(err)
	}
	want := contract.Budget{Steps: 50, Tokens: 1000, CostUSD: 5.00, Wall: 10 * time.Minute}
	if diff := cmp.Diff(k.Budget, want); diff != "" {
		t.Errorf("budget (-got +want):\n%s", diff)
	}

	// Control: the same configuration fills a contract that writes no
	// budget at all.
	write(t, task, "goal: g\n")
	if k, err = contract.Load(task); err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.PrepareContract(k); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(k.Budget, conf); diff != "" {
		t.Errorf("omitted budget (-got +want):\n%s", diff)
	}

	// A contract built in code omits nothing: its budget stands.
	inline := &contract.Contract{Goal: "g", Budget: contract.Budget{Steps: 3}}
	cfg.ApplyToContract(inline, true)
	if diff := cmp.Diff(inline.Budget, contract.Budget{Steps: 3}); diff != "" {
		t.Errorf("built contract budget (-got +want):\n%s", diff)
	}
}
