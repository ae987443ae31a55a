package jsonrpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// LineFramer is ACP's framing: one JSON message a line, "\n" (or "\r\n")
// after each. A line over limit bytes is consumed without being kept and
// reported as a FrameError (with its id when its first bytes hold one);
// blank lines are skipped; a last line without its newline is still a
// message.
func LineFramer(r io.Reader, w io.Writer, limit int) Framer {
	return &lineFramer{in: bufio.NewReaderSize(r, 64<<10), out: bufio.NewWriterSize(w, 64<<10), limit: limit, closer: &closer{r: r}}
}

type lineFramer struct {
	in    *bufio.Reader
	out   *bufio.Writer
	limit int
	*closer

	line []byte
	eof  bool
}

func (f *lineFramer) Read() ([]byte, error) {
	for {
		if f.eof {
			return nil, io.EOF
		}
		line, tooLong, err := f.readLine()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return nil, err
			}
			f.eof = true
		}
		if tooLong {
			return nil, tooLarge(-1, int64(f.limit), line)
		}
		if len(bytes.TrimSpace(line)) > 0 {
			return line, nil
		}
	}
}

// readLine reads one line without its line break; past the limit it
// keeps only the first bytes (to find the id) and reports tooLong.
func (f *lineFramer) readLine() (line []byte, tooLong bool, err error) {
	f.line = f.line[:0]
	for {
		frag, err := f.in.ReadSlice('\n')
		switch {
		case tooLong:
		case len(f.line)+len(frag) > f.limit:
			tooLong = true
			f.line = append(f.line, frag[:min(len(frag), max(0, idPeek-len(f.line)))]...)
		default:
			f.line = append(f.line, frag...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if cap(f.line) > 1<<20 {
			defer func() { f.line = nil }()
		}
		return bytes.TrimSuffix(bytes.TrimSuffix(f.line, []byte("\n")), []byte("\r")), tooLong, err
	}
}

func (f *lineFramer) Write(body []byte) error {
	if bytes.IndexByte(body, '\n') >= 0 {
		var b bytes.Buffer
		if err := json.Compact(&b, body); err != nil {
			return err
		}
		body = b.Bytes()
	}
	if _, err := f.out.Write(body); err != nil {
		return err
	}
	return f.out.WriteByte('\n')
}

func (f *lineFramer) Flush() error { return f.out.Flush() }
