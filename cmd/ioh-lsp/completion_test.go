package main

import (
	"os/exec"
	"strings"
	"testing"
)

// testCompletion: the bash script, sourced in a real bash, completes the
// commands, a command's flags, the sandbox sub-commands and their flags;
// the zsh and fish scripts and the man page name every command of the
// table and its flags (zsh and fish are not installed here, so their
// scripts are checked as text); the man page formats without a warning.
func testCompletion(t *testing.T, bin string) {
	out := func(args ...string) string {
		b, err := exec.Command(bin, args...).Output()
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return string(b)
	}
	script := out("completion", "bash")
	for words, want := range map[string]string{
		"ioh-lsp un":                    "undo",
		"ioh-lsp run --ap":              "--approve",
		"ioh-lsp resume r-1 --budget-u": "--budget-usd",
		"ioh-lsp sandbox d":             "doctor",
		"ioh-lsp sandbox run --ti":      "--timeout",
		"ioh-lsp grep -":                "-F",
	} {
		probe := script + "\nCOMP_WORDS=(" + words + ")\nCOMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))\n_ioh_lsp\necho \"${COMPREPLY[*]}\"\n"
		got, err := exec.Command("bash", "-c", probe).CombinedOutput()
		if err != nil || !strings.Contains(" "+strings.TrimSpace(string(got))+" ", " "+want+" ") {
			t.Errorf("bash completion of %q = %q (%v), want %s", words, got, err, want)
		}
	}
	zsh, fish, man := out("completion", "zsh"), out("completion", "fish"), out("man")
	for _, c := range commands {
		if !strings.Contains(zsh, "'"+c.name+":") || !strings.Contains(fish, " -a "+c.name+" ") || !strings.Contains(man, ".SS \""+c.name) {
			t.Errorf("command %s missing from the zsh or fish script or the man page", c.name)
		}
	}
	for _, flag := range []string{"approve", "budget-wall", "for-run", "force"} {
		if !strings.Contains(zsh, "'--"+flag+"[") || !strings.Contains(fish, "-l "+flag) || !strings.Contains(man, roff("--"+flag)) {
			t.Errorf("flag --%s missing from the zsh or fish script or the man page", flag)
		}
	}
	if code, stderr := runIn(t, bin, t.TempDir(), nil, "completion", "tcsh"); code != 2 || !strings.Contains(stderr, "want bash, zsh or fish") {
		t.Errorf("completion tcsh: exit %d %q", code, stderr)
	}
	if _, err := exec.LookPath("groff"); err != nil {
		return
	}
	cmd := exec.Command("groff", "-ww", "-z", "-man")
	cmd.Stdin = strings.NewReader(man)
	if warn, err := cmd.CombinedOutput(); err != nil || len(warn) > 0 {
		t.Errorf("groff: %v\n%s", err, warn)
	}
}
