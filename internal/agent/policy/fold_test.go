package policy

import "testing"

// A case-insensitive file system stores some names under another
// spelling: the loose reading of deny rules must see through each, while
// the same spelling of an unprotected name stays allowed (control).
func TestProtectedPathsFoldLikeTheFileSystem(t *testing.T) {
	p, err := New(Builtin(nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path string
		want Effect
	}{
		{".git/config", Deny},
		{".GIT/config", Deny},
		{".git\u200c/config", Deny}, // HFS+ ignores U+200C
		{".g\ufeffit/hooks/pre-commit", Deny},
		{".git./config", Deny}, // Windows drops trailing dots
		{".git /config", Deny}, // and spaces
		{"GIT~1/config", Deny}, // the 8.3 short name
		{".git::$INDEX_ALLOCATION/config", Deny},
		{".Github/Workflows/x.yml", Deny},
		{".ENV", Deny},
		{"src/.Env.local", Deny},
		// Controls: ordinary names in the same shapes.
		{"src/config", Allow},
		{"gitx/config", Allow},
		{"GIT~1x/config", Allow},
		{"src\u200c/a.go", Allow},
		{"docs./x.md", Allow},
	} {
		if v := p.CheckWrite(tt.path, ""); v.Effect != tt.want {
			t.Errorf("write %q = %s (%s), want %s", tt.path, v.Effect, v.Reason, tt.want)
		}
	}
}
