package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// leakKey is a fake key the tests put in the environment.
const leakKey = "sk-ant-FAKE123456789"

// leakCassette writes the key into a file, says it, and finishes with it
// in the summary.
const leakCassette = `{"version":1,"turns":[
 {"text":"I will store ` + leakKey + `","tool_calls":[{"name":"write_file","arguments":{"path":"k.txt","content":"` + leakKey + `\n"}}]},
 {"tool_calls":[{"name":"finish","arguments":{"summary":"stored ` + leakKey + `"}}]}]}`

// TestRunPrintsNoSecret: with the key in a secret variable, nothing `run
// --json` prints (stderr progress, the events, the summary) nor `trace`
// holds it, and each place that would carry it says [REDACTED]. Control:
// the same run with the value in no secret variable prints it on both
// streams, so the test looks at a path that carries it.
func TestRunPrintsNoSecret(t *testing.T) {
	files := map[string]string{"cas.json": leakCassette, "t.ioh.yaml": "version: 1\ngoal: \"put " + leakKey + " in k.txt\"\nbudget: {cost_usd: 0}\n"}
	for _, secret := range []bool{true, false} {
		t.Run(map[bool]string{true: "secret", false: "control"}[secret], func(t *testing.T) { testRunPrintsNoSecret(t, files, secret) })
	}
}

func testRunPrintsNoSecret(t *testing.T, files map[string]string, secret bool) {
	{
		w := newBudgetWorld(t, files)
		name := "IOH_TEST_LEAK_TOKEN"
		if !secret {
			name = "IOH_TEST_LEAK_PLAIN"
		}
		t.Setenv(name, leakKey)
		w.env[name] = leakKey
		code, out, errOut := w.cli("run", "t.ioh.yaml", "--approve", "never", "--cassette", "cas.json", "--json")
		if code != exitOK {
			t.Fatalf("secret=%v: exit %d\n%s", secret, code, errOut)
		}
		id := runID(t, errOut)
		_, tr, _ := w.cli("trace", id, "--json")
		_, human, _ := w.cli("trace", id)
		printed := out + errOut + tr + human
		if !secret {
			for what, s := range map[string]string{"stdout": out, "stderr": errOut} {
				if !strings.Contains(s, leakKey) {
					t.Errorf("control: the value in a plain variable is not on %s, so the test proves nothing:\n%s", what, s)
				}
			}
			return
		}
		if n := strings.Count(printed, leakKey); n != 0 {
			t.Errorf("the key is printed %d times:\nstdout:\n%s\nstderr:\n%s\ntrace:\n%s", n, out, errOut, tr)
		}
		for _, want := range []string{`"goal":"put [REDACTED] in k.txt"`, `"summary":"stored [REDACTED]"`, `[REDACTED]\\n`} {
			if !strings.Contains(out, want) {
				t.Errorf("run --json lacks %s:\n%s", want, out)
			}
		}
		if !strings.Contains(errOut, `write_file {"path":"k.txt","content":"[REDACTED]\n"}`) {
			t.Errorf("stderr progress does not show the redacted call:\n%s", errOut)
		}
	}
}

// TestConfiguredURLCredentialsNeverWritten: the password of a configured
// base_url and a credential-like query parameter are secrets: not on
// stderr, not in run --json, not in any byte under the state directory.
// The endpoint refuses connections, so the error names the URL (the
// printed host shows the redaction was exercised) and the stored contract
// holds it.
func TestConfiguredURLCredentialsNeverWritten(t *testing.T) {
	const pw, q = "pw-SUPERSECRET-98765", "QSECRET-0123456789"
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // refused from now on
	w := newBudgetWorld(t, map[string]string{"t.ioh.yaml": "version: 1\ngoal: \"x\"\nretry: {max: 0}\n"})
	w.userConfig("model:\n  provider: openai-compatible\n  base_url: http://user:" + pw + "@" + addr + "/v1?api_key=" + q + "\n  name: local\nprices:\n  local: {input: 0, output: 0}\n")
	code, out, errOut := w.cli("run", "t.ioh.yaml", "--approve", "never", "--json")
	if code != exitProvider {
		t.Fatalf("exit %d, want %d (provider failure)\n%s", code, exitProvider, errOut)
	}
	written := map[string][]byte{"stdout": []byte(out), "stderr": []byte(errOut)}
	filepath.Walk(w.env["IOH_STATE_DIR"], func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			b, _ := os.ReadFile(p)
			written[p] = b
		}
		return nil
	})
	stored := false
	for name, b := range written {
		for _, s := range []string{pw, q} {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds %s", name, s)
			}
		}
		stored = stored || (strings.HasSuffix(name, ".db") || strings.HasSuffix(name, "-wal")) && bytes.Contains(b, []byte(addr+"/v1?api_key="+"[REDACTED]"))
	}
	if !stored {
		t.Errorf("control: no database file holds the redacted base_url, so the test did not look at the stored contract")
	}
	if !strings.Contains(errOut, addr) || !strings.Contains(errOut, "[REDACTED]") {
		t.Errorf("control: stderr does not name the endpoint with its credential redacted:\n%s", errOut)
	}
}

// TestTerminalOutputNeutralisesEscapes: escape sequences in model text
// and in a goal reach the terminal as visible text (\x1b), never raw, on
// run's stderr, in the runs table and in trace; the JSON outputs carry
// them JSON-escaped. Control: trace --json shows the data holds the
// escapes.
func TestTerminalOutputNeutralisesEscapes(t *testing.T) {
	cas := `{"version":1,"turns":[{"text":"hello \u001b[2J\u001b]0;TITLE\u0007 world\r","tool_calls":[{"name":"finish","arguments":{"summary":"done \u001b[31mred"}}]}]}`
	w := newBudgetWorld(t, map[string]string{"cas.json": cas, "t.ioh.yaml": "version: 1\ngoal: \"paint \\e[31mred\\e[0m\"\nbudget: {cost_usd: 0}\n"})
	code, _, errOut := w.cli("run", "t.ioh.yaml", "--approve", "never", "--cassette", "cas.json")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	id := runID(t, errOut)
	_, table, _ := w.cli("runs")
	_, human, _ := w.cli("trace", id)
	_, js, _ := w.cli("trace", id, "--json")
	_, runsJS, _ := w.cli("runs", "--json")
	if !strings.Contains(js, `\u001b[2J`) || !strings.Contains(runsJS, `\u001b[31m`) {
		t.Fatalf("control: the JSON outputs do not carry the escapes:\n%s\n%s", js, runsJS)
	}
	for name, s := range map[string]string{"run stderr": errOut, "runs": table, "trace": human} {
		if strings.ContainsAny(s, "\x1b\x07\r") {
			t.Errorf("%s prints a raw control character:\n%q", name, s)
		}
		if !strings.Contains(s, `\x1b[`) && !strings.Contains(s, `\u001b[`) {
			t.Errorf("%s does not show the escape as text:\n%s", name, s)
		}
	}
	if !strings.Contains(errOut, `hello \x1b[2J\x1b]0;TITLE\x07 world`) {
		t.Errorf("run stderr does not show the model's text escaped:\n%s", errOut)
	}
}

func TestTerminalSafe(t *testing.T) {
	for in, want := range map[string]string{
		"plain\ttext\n":            "plain\ttext\n",
		"ünïcödé 日本":               "ünïcödé 日本",
		"a\x1b[2Jb":                `a\x1b[2Jb`,
		"over\rwrite":              `over\x0dwrite`,
		"bell\x07 del\x7f":         `bell\x07 del\x7f`,
		"c1 \u009b31m":             `c1 \u009b31m`,
		"bad \xff byte":            `bad \xff byte`,
		"\x1b]0;TITLE\x07 visible": `\x1b]0;TITLE\x07 visible`,
	} {
		if got := terminalSafe(in); got != want {
			t.Errorf("terminalSafe(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestOneLineCutsOnCharacters: the runs table cuts a long goal between
// characters, never inside one (which the terminal guard would show as
// \xNN bytes).
func TestOneLineCutsOnCharacters(t *testing.T) {
	goal := strings.Repeat("é", 40) // 80 bytes
	got := oneLine(goal, 61)
	if !utf8.ValidString(got) || got != strings.Repeat("é", 30)+"…" {
		t.Errorf("oneLine = %q", got)
	}
	if got := oneLine("a\nb", 60); got != "a b" {
		t.Errorf("oneLine short = %q", got)
	}
}
