package verify

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWithholderRedactsValues: the values of a dotenv file and the lines
// of any other withheld file are replaced, quoted and JSON-escaped
// spellings too; where two values overlap, no prefix or suffix of either
// stays; a value cut by a "bytes left out" marker or at the text's end
// loses its piece too; short values and other files' text are kept.
func TestWithholderRedactsValues(t *testing.T) {
	root := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(".env", "# comment line here\nexport API_KEY=SECRET_VALUE_123\nQUOTED=\"two words here\"\nDEBUG=1\nPATHY=a\\b\"c_secret\n")
	write("config/secret.yaml", "password: hunter2hunter2\nVALUE_123_AND_MORE\n")
	write("id_ed25519", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n")
	w := newWithholder(root, []string{".env", "config/secret.yaml", "id_ed25519", "missing.env"})
	for _, c := range []struct{ in, want string }{
		{"got SECRET_VALUE_123 here", "got [withheld: .env] here"},
		{"API_KEY=SECRET_VALUE_123\n", "API_KEY=[withheld: .env]\n"},
		{`say "two words here"`, `say [withheld: .env]`}, // the quoted value is one too
		{`{"v":"a\\b\"c_secret"}`, `{"v":"[withheld: .env]"}`},
		{"DEBUG=1 stays", "DEBUG=1 stays"},
		{"pw hunter2hunter2!", "pw [withheld: config/secret.yaml]!"},
		// overlapping values: SECRET_VALUE_123 and VALUE_123_AND_MORE
		{"x SECRET_VALUE_123_AND_MORE y", "x [withheld: .env] y"},
		// cut by a marker and at the ends
		{"head SECRET_V\n[… 100 bytes left out here …]\nLUE_123 tail", "head [withheld: .env]\n[… 100 bytes left out here …]\n[withheld: .env] tail"},
		{"ends in SECRET_VAL", "ends in [withheld: .env]"},
		{"UE_123 starts", "[withheld: .env] starts"},
		// at a text's own ends a piece must be 6 bytes: "--- FAIL" stays
		{"_123 starts", "_123 starts"},
		{"--- FAIL: TestX", "--- FAIL: TestX"},
		{"plain text of the test", "plain text of the test"},
	} {
		if got := w.String(c.in); got != c.want {
			t.Errorf("String(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
	if newWithholder(root, nil) != nil || newWithholder(root, []string{"missing.env"}) != nil {
		t.Error("no withheld values: the withholder should be nil (redacts nothing)")
	}
}

// TestWithholderBounded: only the first MaxWithheldRead bytes of a
// withheld file are read for values, so a huge file costs bounded memory;
// a line past them is not redacted.
func TestWithholderBounded(t *testing.T) {
	root := t.TempDir()
	var b strings.Builder
	for i := 0; b.Len() < 2*MaxWithheldRead; i++ {
		fmt.Fprintf(&b, "line-%08d-of-the-big-file\n", i)
	}
	if err := os.WriteFile(filepath.Join(root, "big.key"), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	w := newWithholder(root, []string{"big.key"})
	total := 0
	for _, v := range w.vals {
		total += len(v.val)
	}
	if total > MaxWithheldRead {
		t.Errorf("%d bytes of values from a file read to %d bytes", total, MaxWithheldRead)
	}
	if got := w.String("line-00000000-of-the-big-file"); got != "[withheld: big.key]" {
		t.Errorf("first line: %q", got)
	}
	last := fmt.Sprintf("line-%08d-of-the-big-file", 2*MaxWithheldRead/28)
	if got := w.String("> " + last + " <"); got != "> "+last+" <" {
		t.Errorf("a line past the bound was redacted (%q): the bound is not applied", got)
	}
}
