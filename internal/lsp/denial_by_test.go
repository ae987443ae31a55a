package lsp_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/lsp/lsptest"
)

// TestActDenialNamesWhoDenied: the model reads "denied by the user" only
// when the user pressed Deny; a dismissed question says so.
func TestActDenialNamesWhoDenied(t *testing.T) {
	for _, tt := range []struct {
		answer, want, never string
	}{
		{"Deny", "denied by the user", "dismissed"},
		{"", "denied by a dismissed prompt in the editor", "denied by the user"},
	} {
		t.Run(tt.want, func(t *testing.T) {
			g := newGate(t)
			f := newFixture(t, map[string]string{"a.txt": "x\n"}, lsptest.Config{Hooks: lsptest.Hooks{ShowMessageRequest: g.hook}})
			ctx := f.ctx()
			id := f.start(ctx, "ioh.run", inline("run true", f.cassette(runTrue(), finish("nothing to change"))))
			<-g.asked
			g.release <- tt.answer
			f.awaitEnd(ctx, id)
			raw, err := f.editor.ExecuteCommand(ctx, "ioh.trace", map[string]string{"runId": id})
			if err != nil {
				t.Fatal(err)
			}
			var tr struct {
				File string `json:"file"`
			}
			if err := json.Unmarshal(raw, &tr); err != nil || tr.File == "" {
				t.Fatalf("ioh.trace answered %.300s (%v)", raw, err)
			}
			b, err := os.ReadFile(tr.File)
			if err != nil {
				t.Fatal(err)
			}
			var got string
			for _, l := range strings.Split(string(b), "\n") {
				if strings.Contains(l, "denied by") {
					got = l
				}
			}
			if !strings.Contains(got, tt.want) || strings.Contains(got, tt.never) {
				t.Errorf("the model read %q, want %q", got, tt.want)
			}
		})
	}
}
