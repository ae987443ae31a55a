package jsonrpc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

const (
	// maxHeaderLine caps one header line; a longer one is malformed.
	maxHeaderLine = 8 << 10
	// maxHeaderLines caps the lines of one header block.
	maxHeaderLines = 32
	// keepBuffer is the largest body buffer kept between messages.
	keepBuffer = 1 << 20
)

// contentLength is the header that starts every frame, lowercased.
const contentLength = "content-length:"

// HeaderFramer is the LSP base protocol's framing: a header block with
// Content-Length, a blank line, the body. It reads so that hostile or
// broken input never ends the session while the framing still allows
// going on:
//
//   - a body over limit is read and discarded, never buffered, and
//     reported (with its id when its first bytes hold one);
//   - a malformed header (a line without a colon, a Content-Length that
//     is not a number, a line over 8 KiB, more than 32 lines, no
//     Content-Length) is reported, and the next Read resynchronises at
//     the next line holding "Content-Length:" (so the report goes out
//     before the reader waits for more input).
//
// Only the end of the input (io.EOF between frames, io.ErrUnexpectedEOF
// inside one) or a read error ends it.
func HeaderFramer(r io.Reader, w io.Writer, limit int64) Framer {
	return &headerFramer{in: bufio.NewReaderSize(r, 64<<10), out: bufio.NewWriterSize(w, 64<<10), limit: limit, closer: &closer{r: r}}
}

type headerFramer struct {
	in    *bufio.Reader
	out   *bufio.Writer
	limit int64
	*closer

	body []byte // reused body buffer, valid until the next Read
	// pending is a header line found while resynchronising, to be read
	// as the first line of the next header block.
	pending []byte
	resync  bool // a malformed header was reported: skip to the next one
}

// headerError is a malformed header block.
type headerError struct{ msg string }

func (e *headerError) Error() string { return "malformed message header: " + e.msg }

func (f *headerFramer) Read() ([]byte, error) {
	if f.resync {
		f.resync = false
		if err := f.skipToHeader(); err != nil {
			return nil, err
		}
	}
	length, err := f.readHeader()
	var he *headerError
	if errors.As(err, &he) {
		f.resync = true
		return nil, &FrameError{Code: ParseError, Message: he.Error()}
	}
	if err != nil {
		return nil, err
	}
	if length > f.limit {
		return nil, f.skipBody(length)
	}
	if cap(f.body) < int(length) || cap(f.body) > keepBuffer {
		f.body = make([]byte, length)
	}
	body := f.body[:length]
	if _, err := io.ReadFull(f.in, body); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return body, nil
}

func (f *headerFramer) Write(body []byte) error {
	var hdr [48]byte
	h := append(hdr[:0], "Content-Length: "...)
	h = strconv.AppendInt(h, int64(len(body)), 10)
	h = append(h, "\r\n\r\n"...)
	if _, err := f.out.Write(h); err != nil {
		return err
	}
	_, err := f.out.Write(body)
	return err
}

func (f *headerFramer) Flush() error { return f.out.Flush() }

// skipBody discards an oversized body, keeping only its first bytes to
// find the request's id.
func (f *headerFramer) skipBody(length int64) error {
	peek := make([]byte, min(length, idPeek))
	if _, err := io.ReadFull(f.in, peek); err != nil {
		return io.ErrUnexpectedEOF
	}
	rest := length - int64(len(peek))
	if n, err := io.CopyN(io.Discard, f.in, rest); err != nil || n != rest {
		return io.ErrUnexpectedEOF
	}
	return tooLarge(length, f.limit, peek)
}

// readHeader reads a header block and returns the Content-Length. Blank
// lines before a block are skipped. io.EOF before any header byte is the
// clean end of the stream.
func (f *headerFramer) readHeader() (int64, error) {
	length, consumed := int64(-1), 0
	for lines := 0; ; {
		line, err := f.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) && consumed > 0 {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		consumed += len(line)
		if len(bytes.TrimRight(line, "\r\n")) == 0 {
			if lines == 0 {
				continue // a stray line break between frames
			}
			break
		}
		if i := indexFold(line, contentLength); i > 0 {
			// Bytes before a header (the tail of a body whose
			// Content-Length was short): start over at the header.
			f.pending = append([]byte(nil), line[i:]...)
			return 0, &headerError{"bytes before a Content-Length header"}
		}
		if lines++; lines > maxHeaderLines {
			return 0, &headerError{fmt.Sprintf("more than %d header lines", maxHeaderLines)}
		}
		n, err := headerLength(line)
		if err != nil {
			return 0, err
		}
		if n >= 0 {
			length = n
		}
	}
	if length < 0 {
		return 0, &headerError{"no Content-Length"}
	}
	return length, nil
}

// headerLength is the value of a Content-Length line, -1 for another
// header.
func headerLength(line []byte) (int64, error) {
	name, value, ok := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(":"))
	if !ok {
		return 0, &headerError{"a header line without a colon"}
	}
	if !bytes.EqualFold(bytes.TrimSpace(name), []byte("content-length")) {
		return -1, nil
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(value)), 10, 64)
	if err != nil || n < 0 {
		return 0, &headerError{"Content-Length is not a non-negative decimal number"}
	}
	return n, nil
}

// readLine returns the next line, its line break included: the pending
// line of a resynchronisation first. A line longer than maxHeaderLine is
// malformed.
func (f *headerFramer) readLine() ([]byte, error) {
	if f.pending != nil {
		line := f.pending
		f.pending = nil
		return line, nil
	}
	line, err := f.in.ReadSlice('\n')
	switch {
	case err == nil:
		if len(line) > maxHeaderLine {
			return nil, &headerError{fmt.Sprintf("a header line longer than %d bytes", maxHeaderLine)}
		}
		return line, nil
	case errors.Is(err, bufio.ErrBufferFull):
		return nil, &headerError{fmt.Sprintf("a header line longer than %d bytes", maxHeaderLine)}
	case errors.Is(err, io.EOF) && len(line) > 0:
		return nil, io.ErrUnexpectedEOF
	}
	return nil, err
}

// skipToHeader discards input up to the next "Content-Length:" (in any
// case), which becomes the pending first line of the next header block.
// Memory stays bounded: the input is scanned a buffer at a time, keeping
// only enough of each to find a header split across two reads.
func (f *headerFramer) skipToHeader() error {
	if f.pending != nil {
		return nil // the header that showed the error starts the next block
	}
	var carry []byte
	for {
		chunk, err := f.in.ReadSlice('\n')
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return err // io.EOF: the input ended while skipping garbage
		}
		window := append(carry, chunk...)
		if i := indexFold(window, contentLength); i >= 0 {
			if err == nil { // the header's line is complete
				f.pending = append([]byte(nil), window[i:]...)
				return nil
			}
			// The header line goes on past the buffer: keep its start.
			carry = append([]byte(nil), window[i:]...)
			if len(carry) > maxHeaderLine {
				carry = nil // too long to be a header line
			}
			continue
		}
		keep := min(len(window), len(contentLength)-1)
		carry = append([]byte(nil), window[len(window)-keep:]...)
	}
}

// indexFold is bytes.Index ignoring ASCII case; sub is lowercase.
func indexFold(b []byte, sub string) int {
	for i := 0; i+len(sub) <= len(b); i++ {
		if bytes.EqualFold(b[i:i+len(sub)], []byte(sub)) {
			return i
		}
	}
	return -1
}
