package contract

import (
	"errors"
	"slices"
	"testing"
)

// TestGlobEntriesCheckedOneByOne: every entry of every glob list is
// checked on its own and a bad one is a contract error naming its file,
// line, column and field, wherever it sits in the list (QA: a second
// entry "../outside/**" or "/etc/**" used to be accepted, being joined
// into one alternation with the first).
func TestGlobEntriesCheckedOneByOne(t *testing.T) {
	for _, tc := range []struct {
		src, want string
	}{
		{"goal: g\nscope: {write: [\"src/**\", \"../outside/**\"]}\n",
			`t.yaml:2:27: scope.write[1]: "../outside/**" must not contain ".."`},
		{"goal: g\nscope: {write: [\"src/**\", \"/etc/**\"]}\n",
			`t.yaml:2:27: scope.write[1]: "/etc/**" must be workspace-relative`},
		{"goal: g\nscope:\n  write:\n    - src/**\n    - \"{src/**,/etc/**}\"\n",
			`t.yaml:5:7: scope.write[1]: "{src/**,/etc/**}" must be workspace-relative (an alternative starts with "/")`},
		{"goal: g\nscope: {write: [\"src/**\", \"{a\"]}\n",
			`t.yaml:2:27: scope.write[1]: "{a" is not a valid glob (unbalanced braces, an unclosed [ or an empty [], or a trailing backslash)`},
		{"goal: g\ncontext: [\"{a\"]\n",
			`t.yaml:2:11: context[0]: "{a" is not a valid glob (unbalanced braces, an unclosed [ or an empty [], or a trailing backslash)`},
		{"goal: g\ncontext: [\"ok.go\", \"a[b\"]\n",
			`t.yaml:2:20: context[1]: "a[b" is not a valid glob (unbalanced braces, an unclosed [ or an empty [], or a trailing backslash)`},
		{"goal: g\ncontext: [\"[z-a]\"]\n",
			`t.yaml:2:11: context[0]: "[z-a]" has the inverted range z-a, which matches nothing`},
		{"goal: g\nverify:\n  protect: [\"a_test.go\", \"a[b\"]\n",
			`t.yaml:3:26: verify.protect[1]: "a[b" is not a valid glob (unbalanced braces, an unclosed [ or an empty [], or a trailing backslash)`},
		{"goal: g\nverify:\n  protect: [\"../x\"]\n",
			`t.yaml:3:13: verify.protect[0]: "../x" must not contain ".."`},
		{"goal: g\nscope: {write: [\"  \"]}\n",
			`t.yaml:2:17: scope.write[0]: is empty`},
		{"goal: g\npolicy: {rules: [{act: write, effect: deny, pattern: \"a[b\"}]}\n",
			`t.yaml:2:54: policy.rules[0].pattern: invalid policy rule: path pattern "a[b" is not a valid glob (unbalanced braces, an unclosed [ or an empty [], or a trailing backslash)`},
		{"goal: g\nverify:\n  checks: [{run: [make], report: \"junit:out/[z-a].xml\"}]\n",
			`t.yaml:3:34: verify.checks[0].report: report "junit:out/[z-a].xml": "out/[z-a].xml" has the inverted range z-a, which matches nothing`},
		// The first problem in document order wins.
		{"goal: g\ncontext: [\"a[b\"]\nscope: {write: [\"/x\"]}\n",
			`t.yaml:2:11: context[0]: "a[b" is not a valid glob (unbalanced braces, an unclosed [ or an empty [], or a trailing backslash)`},
	} {
		_, err := Parse([]byte(tc.src), "t.yaml")
		var ce *Error
		if !errors.As(err, &ce) {
			t.Errorf("Parse(%q) = %v, want a contract error", tc.src, err)
			continue
		}
		if err.Error() != tc.want {
			t.Errorf("Parse(%q):\n got %s\nwant %s", tc.src, err, tc.want)
		}
	}
}

// TestGoodGlobListsParse is the control: multi-entry lists of valid globs,
// commas and braces included, parse unchanged.
func TestGoodGlobListsParse(t *testing.T) {
	src := "goal: g\ncontext: [\"src/*.go\", \"docs/{a,b}.md\"]\nscope: {write: [\"src/**\", \"docs/a,**\", \"./README.md\"]}\nverify:\n  protect: [\"src/*_test.go\", \"testdata/[a-z]*\"]\n"
	c, err := Parse([]byte(src), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"src/**", "docs/a,**", "./README.md"}; !slices.Equal(c.Scope.Write, want) {
		t.Errorf("scope.write = %q, want %q", c.Scope.Write, want)
	}
	if want := []string{"src/*_test.go", "testdata/[a-z]*"}; !slices.Equal(c.Verify.Protect, want) {
		t.Errorf("verify.protect = %q, want %q", c.Verify.Protect, want)
	}
	if want := []string{"src/*.go", "docs/{a,b}.md"}; !slices.Equal(c.Context, want) {
		t.Errorf("context = %q, want %q", c.Context, want)
	}
}
