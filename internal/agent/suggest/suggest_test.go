package suggest

import "testing"

func TestNearest(t *testing.T) {
	keys := []string{"model", "approve", "budget", "policy", "trusted", "sandbox"}
	for _, tt := range []struct{ typo, want string }{
		{"modle", "model"},
		{"budgets", "budget"},
		{"aprove", "approve"},
		{"trust", "trusted"},
		{"zzz", ""},            // nothing near
		{"network", ""},        // a real word, far from all
		{"m", ""},              // too short to guess from
		{"sandbox", "sandbox"}, // exact
	} {
		if got := Nearest(tt.typo, keys); got != tt.want {
			t.Errorf("Nearest(%q) = %q, want %q", tt.typo, got, tt.want)
		}
	}
	if d := Distance("kitten", "sitting"); d != 3 {
		t.Errorf("Distance(kitten, sitting) = %d, want 3", d)
	}
}
