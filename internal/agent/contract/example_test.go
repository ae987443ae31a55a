package contract_test

import (
	"fmt"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
)

func ExampleParse() {
	c, err := contract.Parse([]byte(`
goal: "Make ParseDuration accept a 'd' suffix for days"
verify:
  - run: [go, test, ./time/...]
budget: {steps: 40}
`), "task.ioh.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Goal)
	fmt.Println(c.Verify.Checks[0].Name, c.Verify.Checks[0].Timeout)
	fmt.Println(c.Budget.Steps, c.Budget.Tokens, c.Budget.Wall)

	_, err = contract.Parse([]byte("goal: g\nbudget: {stepz: 4}\n"), "task.ioh.yaml")
	fmt.Println(err)
	// Output:
	// Make ParseDuration accept a 'd' suffix for days
	// go test ./time/... 10m0s
	// 40 500000 30m0s
	// task.ioh.yaml:2:10: budget.stepz: unknown field; did you mean steps?
}
