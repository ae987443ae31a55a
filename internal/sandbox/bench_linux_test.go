package sandbox

import (
	"context"
	"os/exec"
	"testing"
)

// BenchmarkSpawn measures a contained /bin/true from a running process (the
// server's case, without the CLI's own start-up); BenchmarkBareExec is the
// reference. bench/sandbox.sh reports the CLI figures.
func BenchmarkSpawn(b *testing.B) {
	r := testRunner()
	for b.Loop() {
		out, err := r.Run(context.Background(), &Spec{Argv: []string{"/bin/true"}, Dir: "/", Backend: BackendLinux, View: testView()})
		if err != nil || out.ExitCode != 0 {
			b.Fatalf("%+v %v", out, err)
		}
	}
}

func BenchmarkBareExec(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}
