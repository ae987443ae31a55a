package lsp

import "testing"

// TestSettingLineFindsNestedKeys: the line of an ignored setting is its
// nested key's (the provider: under model:, the first check under
// verify.checks), a flow mapping's parent line, and 0 for a key the file
// does not have.
func TestSettingLineFindsNestedKeys(t *testing.T) {
	const task = `version: 1
goal: greet
name: provider
model:
  name: x
  provider: anthropic
  fallback:
    - provider: openai
      api_key_env: FOO
    - provider: other
      api_key_env: BAR
verify:
  checks:
  - name: unit
    run: [go, test]
  - name: probe
    network: true
policy: {rules: []}
`
	for _, tt := range []struct {
		key  string
		want int
	}{
		{"model.provider", 6}, {"model.name", 5}, {"model.fallback[1].api_key_env", 11},
		{"verify.checks[0]", 14}, {"verify.checks[1]", 16}, {"verify.checks[1].network", 17},
		{"verify.checks[2]", 13}, {"policy", 18}, {"budget", 0}, {"policy.rules", 18},
	} {
		if got := settingLine([]byte(task), tt.key); got != tt.want {
			t.Errorf("settingLine(%s) = %d, want %d", tt.key, got, tt.want)
		}
	}
	if got := settingLine([]byte("version: 1\nmodel: {provider: anthropic, name: x}\n"), "model.provider"); got != 2 {
		t.Errorf("flow mapping: settingLine = %d, want 2", got)
	}
}
