package workspace

import "bytes"

// Streaming bounds: grep reads a file readChunk bytes at a time and keeps
// at most one line in memory, up to maxLineLen bytes. Each of the
// walker's goroutines (max(4, 2×GOMAXPROCS)) holds one such buffer, so a
// search holds at most that many times maxLineLen+readChunk bytes of file
// data, whatever the size of the files.
const (
	readChunk  = 64 << 10
	maxLineLen = 1 << 20
)

// searchFile streams the file abs through m using the pooled buffer *bp
// and returns its matching lines; a binary file yields nothing.
//
// A line longer than maxLineLen is searched in consecutive pieces of
// maxLineLen bytes (a match that spans two pieces is not found) and is
// reported once, with its number and the text of the first matching piece.
func (m *matcher) searchFile(rel, abs string, bp *[]byte) ([]Match, error) {
	f, err := openRaw(abs)
	if err != nil {
		return nil, err
	}
	defer f.close()
	buf := (*bp)[:0]
	if cap(buf) < readChunk {
		buf = make([]byte, 0, readChunk)
	}
	defer func() { *bp = buf[:0] }()
	var out []Match
	found, line := 0, 1
	long := false     // inside a line longer than maxLineLen
	reported := false // that long line has been reported
	first := true
	for eof := false; !eof; {
		if len(buf) == cap(buf) {
			if cap(buf) < maxLineLen+readChunk {
				nb := make([]byte, len(buf), min(2*cap(buf), maxLineLen+readChunk))
				copy(nb, buf)
				buf = nb
			} else {
				// A full buffer without a newline: a piece of a long line.
				if !long {
					long, reported = true, false
				}
				out, reported = m.searchPiece(rel, buf, line, reported, &found, out)
				buf = buf[:0]
				if m.max > 0 && found >= m.max {
					return out, nil
				}
			}
		}
		n, isEOF, err := f.read(buf[len(buf):cap(buf)])
		if err != nil {
			return nil, err
		}
		buf, eof = buf[:len(buf)+n], isEOF || n == 0
		if first {
			first = false
			if isBinary(buf) {
				return nil, nil
			}
		}
		end := len(buf) // complete lines end here
		if !eof {
			end = bytes.LastIndexByte(buf, '\n') + 1
			if end == 0 {
				continue // no complete line yet: read more
			}
		}
		chunk := buf[:end]
		if long {
			// The rest of a long line ends this chunk's first line.
			nl := bytes.IndexByte(chunk, '\n')
			tail := chunk
			if nl >= 0 {
				tail = chunk[:nl]
			}
			out, _ = m.searchPiece(rel, tail, line, reported, &found, out)
			if nl < 0 {
				break // end of file inside the long line
			}
			long, line, chunk = false, line+1, chunk[nl+1:]
		}
		var stop bool
		out, stop = m.scanLines(rel, chunk, line, &found, out)
		if stop {
			return out, nil
		}
		line += bytes.Count(chunk, []byte{'\n'})
		buf = buf[:copy(buf, buf[end:])]
	}
	return out, nil
}

// searchPiece searches one piece of a long line (it holds no newline) and
// reports the line at most once.
func (m *matcher) searchPiece(rel string, piece []byte, line int, reported bool, found *int, out []Match) ([]Match, bool) {
	if reported || len(piece) == 0 || !m.re.Match(piece) {
		return out, reported
	}
	*found++
	return append(out, Match{Path: rel, Line: line, Text: string(piece)}), true
}
