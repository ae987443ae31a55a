package ioh_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/ioh-lsp/ioh-lsp/ioh"
)

// A contract whose check runs in the sandbox, and a recorded session
// (the replay provider) that edits the file and finishes, so the example
// runs offline.
const (
	task = `version: 1
goal: "Make greet.txt say hello, world"
verify:
  checks:
    - name: greeting
      shell: "grep -qx 'hello, world' greet.txt"
`
	cassette = `{"version": 1, "turns": [
 {"tool_calls": [{"name": "edit_file", "arguments": {"path": "greet.txt", "old": "hello", "new": "hello, world"}}]},
 {"tool_calls": [{"name": "finish", "arguments": {"summary": "greet.txt says hello, world"}}]}
]}`
)

// An embedder runs a contract with containment: the check runs in the
// OS sandbox, and the verified change is applied.
func ExampleNew() {
	dir, _ := os.MkdirTemp("", "ioh-example-")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "greet.txt"), []byte("hello\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "cassette.json"), []byte(cassette), 0o644)

	ctx := context.Background()
	eng, err := ioh.New(ctx, ioh.Config{Root: dir, Approve: "auto", Cassette: filepath.Join(dir, "cassette.json")})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()
	c, err := ioh.ParseContract("task.ioh.yaml", []byte(task))
	if err != nil {
		log.Fatal(err)
	}
	res, err := eng.Run(ctx, c)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("outcome:", res.Outcome)
	for _, check := range res.Report.Checks {
		fmt.Printf("check %s passed: %v\n", check.Name, check.Passed)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "greet.txt"))
	fmt.Print("greet.txt: ", string(b))
	// Output:
	// outcome: applied
	// check greeting passed: true
	// greet.txt: hello, world
}

// The sandbox alone: one command, contained, in the strongest tier that
// works here.
func ExampleNewRunner() {
	dir, _ := os.MkdirTemp("", "ioh-example-")
	defer os.RemoveAll(dir)
	var out bytes.Buffer
	res, err := ioh.NewRunner(nil).Run(context.Background(), &ioh.Spec{
		Argv: []string{"sh", "-c", "echo contained; touch /etc/ioh-example 2>/dev/null || echo writing /etc refused"}, Dir: dir,
		View: ioh.DefaultView(ioh.ViewOptions{}), Stdout: &out, Stderr: &out,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(out.String())
	fmt.Println("exit:", res.ExitCode)
	// Output:
	// contained
	// writing /etc refused
	// exit: 0
}

// A caller that runs many commands gives its runner a pool: each run's
// stage is then started ahead of it, and what runs leave for the next is
// checked when taken. Close kills what still waits.
func ExampleWithPool() {
	pool := ioh.NewPool()
	defer pool.Close()
	r := ioh.NewRunner(nil, ioh.WithPool(pool))
	for i := 0; i < 3; i++ {
		dir, _ := os.MkdirTemp("", "ioh-example-")
		var out bytes.Buffer
		res, err := r.Run(context.Background(), &ioh.Spec{
			Argv: []string{"sh", "-c", "ls"}, Dir: dir, Writable: []string{dir},
			View: ioh.DefaultView(ioh.ViewOptions{}), Stdout: &out, Stderr: &out,
		})
		os.RemoveAll(dir)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("run %d: exit %d, %q\n", i, res.ExitCode, out.String())
	}
	// Output:
	// run 0: exit 0, ""
	// run 1: exit 0, ""
	// run 2: exit 0, ""
}
