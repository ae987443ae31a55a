package contract

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestHostileInputs checks that inputs built to be expensive are refused
// with a positioned error instead of being expanded.
func TestHostileInputs(t *testing.T) {
	var laughs strings.Builder
	laughs.WriteString("a: &a [x, x, x, x, x, x, x, x, x]\n")
	for c := 'b'; c <= 'g'; c++ {
		prev := string(c - 1)
		laughs.WriteString(string(c) + ": &" + string(c) + " [" + strings.Repeat("*"+prev+", ", 8) + "*" + prev + "]\n")
	}
	tests := []struct{ name, src, want string }{
		{"alias expansion", laughs.String(), "x:1:17: e[0][0][7][5][3]: document is nested too deeply or too large"},
		{"deep flow sequence", strings.Repeat("[", 5000), "x:1:65: nested deeper than 64 levels"},
		{"deep flow mapping", strings.Repeat("{a: ", 3000), "x:1:257: nested deeper than 64 levels"},
		{"too large", "goal: " + strings.Repeat("x", MaxSize), "x: contract is larger than 1048576 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.src), "x")
			if err == nil {
				t.Fatal("Parse succeeded")
			}
			if diff := cmp.Diff(err.Error(), tt.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
}
