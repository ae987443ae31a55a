package lsp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/lsp/lsptest"
)

// TestExpectationsMeetARealRun waits on named expectations for a real run
// (replay, sandboxed check): its progress ends and its edit reaches the
// editor.
func TestExpectationsMeetARealRun(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "hello\n"}, lsptest.Config{})
	ctx := f.ctx()
	id := f.start(ctx, "ioh.run", inline("greet", f.cassette(edit("a.txt", "hello", "world"), finish("done")), []string{"grep", "-q", "world", "a.txt"}))
	if _, err := f.editor.Expect(ctx, lsptest.ProgressEnd("ioh/"+id), f.editor.EditTouches("a.txt")); err != nil {
		t.Fatal(err)
	}
}

// TestUnmetExpectationsSayWhatTheySaw: when the deadline passes, the error
// names each unmet expectation and what the editor held instead.
func TestUnmetExpectationsSayWhatTheySaw(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "hello\n"}, lsptest.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := f.editor.Expect(ctx,
		lsptest.ProgressEnd("ioh/r-none"),
		f.editor.DiagnosticAt("a.txt", 0, "boom"),
		f.editor.EditTouches("a.txt"),
		lsptest.LogContains("never logged"))
	if err == nil {
		t.Fatal("expectations on an idle server were met")
	}
	for _, want := range []string{
		"progress ioh/r-none ended; saw no progress for it",
		`a diagnostic at a.txt:1 containing "boom"; saw no diagnostics on a.txt`,
		"an applied edit changing a.txt; saw 0 edits",
		`a log message containing "never logged"; saw`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q:\n%v", want, err)
		}
	}
}
