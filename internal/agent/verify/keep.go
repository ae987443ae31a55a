package verify

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// clipText keeps at most head+tail bytes of a text written in pieces: the
// first head bytes and the latest tail bytes, and counts what it left out
// between them. Memory stays bounded whatever is written.
type clipText struct {
	head, tail int
	h, t       []byte
	dropped    int64
}

func newClip(head, tail int) *clipText { return &clipText{head: head, tail: tail} }

func (c *clipText) WriteString(s string) {
	if n := min(c.head-len(c.h), len(s)); n > 0 {
		c.h = append(c.h, s[:n]...)
		s = s[n:]
	}
	if s == "" {
		return
	}
	c.t = append(c.t, s...)
	if len(c.t) > 2*c.tail+4096 {
		c.trim()
	}
}

func (c *clipText) trim() {
	if over := len(c.t) - c.tail; over > 0 {
		c.dropped += int64(over)
		c.t = append([]byte(nil), c.t[over:]...)
	}
}

// Len is the number of bytes written.
func (c *clipText) Len() int64 { return int64(len(c.h)+len(c.t)) + c.dropped }

// Dropped is the number of bytes String leaves out.
func (c *clipText) Dropped() int64 { c.trim(); return c.dropped }

// String is the head, a line naming the bytes left out (when any), and the
// tail.
func (c *clipText) String() string {
	c.trim()
	if c.dropped == 0 {
		return string(c.h) + string(c.t)
	}
	return string(c.h) + fmt.Sprintf(cutMarker, c.dropped) + string(c.t)
}

// cutMarker stands where kept text leaves bytes out.
const cutMarker = "\n[… %d bytes left out here …]\n"

// maxLine bounds one line of evidence; the rest of a longer line is
// dropped (a test2json event that long is no event a reader needs whole).
const maxLine = 4 << 20

// eachLine calls fn with every line of r (without its newline, "\r"
// trimmed), a line longer than maxLine cut there. It stops at the first
// read error other than EOF and returns it.
func eachLine(r io.Reader, fn func(string)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte
	for {
		frag, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			if len(long) < maxLine {
				long = append(long, frag[:min(len(frag), maxLine-len(long))]...)
			}
			continue
		}
		line := frag
		if long != nil {
			if len(long) < maxLine {
				long = append(long, frag[:min(len(frag), maxLine-len(long))]...)
			}
			line, long = long, nil
		}
		if len(line) > 0 {
			fn(strings.TrimRight(strings.TrimSuffix(string(line), "\n"), "\r"))
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
