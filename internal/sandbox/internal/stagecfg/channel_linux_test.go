package stagecfg

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestRead: the stage reads its config frame however the
// caller's writes split it (a byte at a time; a frame larger than the
// first read's buffer) and keeps what followed it (the go line) for
// AwaitGo; a closed channel, a cut frame or a foreign one is an error.
func TestRead(t *testing.T) {
	big := &Config{Argv: []string{"/bin/true"}, Dir: "/w"}
	for i := range 3000 {
		big.ReadView = append(big.ReadView, fmt.Sprintf("/usr/share/doc/package-%04d/copyright", i))
	}
	small := &Config{Argv: []string{"sh", "-c", "echo"}, Env: []string{"A=b"}}
	frame := func(cfg *Config) []byte {
		var b bytes.Buffer
		if err := Write(&b, cfg); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	// read feeds data to a pipe in chunks of step bytes (all at once if
	// step is 0), closes it, and reads a frame from it.
	read := func(data []byte, step int) (body, rest []byte, err error) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		go func() { // ends when all is written or the reader is gone
			defer w.Close()
			for len(data) > 0 {
				n := len(data)
				if step > 0 {
					n = min(n, step)
				}
				if _, err := w.Write(data[:n]); err != nil {
					return
				}
				data = data[n:]
				if step > 0 {
					time.Sleep(time.Microsecond)
				}
			}
		}()
		fd := int(r.Fd())
		if step == 1 { // and the descriptor non-blocking: Read polls
			if err := unix.SetNonblock(fd, true); err != nil {
				t.Fatal(err)
			}
		}
		return Read(fd)
	}
	for _, c := range []struct {
		name string
		cfg  *Config
		step int
	}{{"small at once", small, 0}, {"small a byte at a time, non-blocking", small, 1}, {"big at once", big, 0}, {"big in odd pieces", big, 4093}} {
		f := frame(c.cfg)
		body, rest, err := read(append(f, GoWord...), c.step)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !bytes.Equal(body, f[HeaderLen:]) {
			t.Fatalf("%s: body of %d bytes, want %d", c.name, len(body), len(f)-HeaderLen)
		}
		if len(rest) > len(GoWord) || !strings.HasPrefix(GoWord, string(rest)) {
			t.Fatalf("%s: %q after the frame, want a prefix of %q", c.name, rest, GoWord)
		}
		if got, err := Decode(body); err != nil || len(got.ReadView) != len(c.cfg.ReadView) {
			t.Fatalf("%s: decoded %d view paths, %v", c.name, len(got.ReadView), err)
		}
	}
	f := frame(big)
	for _, c := range []struct {
		name, want string
		data       []byte
	}{
		{"nothing", "closed the config channel", nil},
		{"a cut header", "cut short", f[:5]},
		{"a cut body", "cut short", f[:len(f)-1]},
		{"JSON", "not a stage config frame", []byte(`{"argv":["/bin/true"],"dir":"/"}` + "\n")},
	} {
		if _, _, err := read(c.data, 0); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}

// TestAwaitGo: the go line, whether it came with the config or after it
// a byte at a time, lets the thread join the run's groups (a "0" in each
// tasks file) and closes the channel; anything else, EOF included,
// refuses and joins nothing, and so does a second AwaitGo or one with no
// config read. A tasks file that cannot be opened fails ExpectGo.
func TestAwaitGo(t *testing.T) {
	dir := t.TempDir()
	tasks := func() []string {
		var ps []string
		for i := range 2 {
			p := filepath.Join(dir, fmt.Sprintf("tasks%d", i))
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			ps = append(ps, p)
		}
		return ps
	}
	joined := func(ps []string) bool {
		for _, p := range ps {
			if b, err := os.ReadFile(p); err != nil || string(b) != "0" {
				return false
			}
		}
		return true
	}
	// await arms a pipe's read end with rest, writes more a byte at a
	// time and closes it, and awaits the go line.
	await := func(rest, more string, ps []string) error {
		var p [2]int
		if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
			t.Fatal(err)
		}
		Reset()
		if err := ExpectGo(p[0], []byte(rest), ps); err != nil {
			t.Fatal(err)
		}
		go func() {
			defer unix.Close(p[1])
			for i := range len(more) {
				if _, err := unix.Write(p[1], []byte{more[i]}); err != nil {
					return
				}
				time.Sleep(time.Microsecond)
			}
		}()
		err := AwaitGo()
		if _, ferr := unix.FcntlInt(uintptr(p[0]), unix.F_GETFD, 0); ferr == nil {
			t.Errorf("rest %q, more %q: the config channel is still open", rest, more)
			unix.Close(p[0])
		}
		return err
	}
	for _, c := range []struct{ rest, more string }{{GoWord, ""}, {"", GoWord}, {"g", "o\n"}} {
		ps := tasks()
		if err := await(c.rest, c.more, ps); err != nil {
			t.Fatalf("rest %q, more %q: %v", c.rest, c.more, err)
		}
		if !joined(ps) {
			t.Fatalf("rest %q, more %q: the groups were not joined", c.rest, c.more)
		}
		if err := AwaitGo(); err == nil || !strings.Contains(err.Error(), "no config channel") {
			t.Fatalf("a second AwaitGo: %v", err)
		}
	}
	for _, c := range []struct{ rest, more string }{{"", ""}, {"g", ""}, {"", "no\n"}, {"", "GO\n"}} {
		ps := tasks()
		if err := await(c.rest, c.more, ps); err == nil || !strings.Contains(err.Error(), "did not confirm") {
			t.Fatalf("rest %q, more %q: %v, want a refusal", c.rest, c.more, err)
		}
		if b, _ := os.ReadFile(ps[0]); len(b) != 0 {
			t.Fatalf("rest %q, more %q: joined after a refusal (%q)", c.rest, c.more, b)
		}
	}
	Reset()
	if err := AwaitGo(); err == nil {
		t.Fatal("AwaitGo with no config read")
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[1])
	if err := ExpectGo(p[0], nil, []string{filepath.Join(dir, "missing", "tasks")}); err == nil || !strings.Contains(err.Error(), "open the run's cgroup") {
		t.Fatalf("a missing tasks file: %v", err)
	}
	if err := AwaitGo(); err == nil {
		t.Fatal("AwaitGo after a failed ExpectGo")
	}
}
