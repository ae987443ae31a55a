package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestReadStageConfig: the stage reads its config frame however the
// caller's writes split it (a byte at a time; a frame larger than the
// first read's buffer) and keeps what followed it (the "go") for
// awaitGo; a closed channel, a cut frame or a foreign one is an error.
func TestReadStageConfig(t *testing.T) {
	big := &initConfig{Argv: []string{"/bin/true"}, Dir: "/w"}
	for i := range 3000 {
		big.ReadView = append(big.ReadView, fmt.Sprintf("/usr/share/doc/package-%04d/copyright", i))
	}
	small := &initConfig{Argv: []string{"sh", "-c", "echo"}, Env: []string{"A=b"}}
	frame := func(cfg *initConfig) []byte {
		var b bytes.Buffer
		if err := writeStageConfig(&b, cfg); err != nil {
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
		if step == 1 { // and the descriptor non-blocking: readStageConfig polls
			if err := unix.SetNonblock(fd, true); err != nil {
				t.Fatal(err)
			}
		}
		return readStageConfig(fd)
	}
	for _, c := range []struct {
		name string
		cfg  *initConfig
		step int
	}{{"small at once", small, 0}, {"small a byte at a time, non-blocking", small, 1}, {"big at once", big, 0}, {"big in odd pieces", big, 4093}} {
		f := frame(c.cfg)
		body, rest, err := read(append(f, goWord...), c.step)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !bytes.Equal(body, f[8:]) {
			t.Fatalf("%s: body of %d bytes, want %d", c.name, len(body), len(f)-8)
		}
		if len(rest) > len(goWord) || !strings.HasPrefix(goWord, string(rest)) {
			t.Fatalf("%s: %q after the frame, want a prefix of %q", c.name, rest, goWord)
		}
		if got, err := decodeStageConfig(body); err != nil || len(got.ReadView) != len(c.cfg.ReadView) {
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
