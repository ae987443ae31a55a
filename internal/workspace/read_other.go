//go:build !unix

package workspace

import (
	"errors"
	"io"
	"os"
)

// rawFile reads a file through os.File where raw syscalls are not
// available.
type rawFile struct{ f *os.File }

func openRaw(abs string) (rawFile, error) {
	f, err := os.Open(abs)
	return rawFile{f}, err
}

// read fills p from the file; eof reports that the file has no more data.
func (f rawFile) read(p []byte) (n int, eof bool, err error) {
	n, err = io.ReadFull(f.f, p)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return n, true, nil
	}
	return n, false, err
}

func (f rawFile) close() { f.f.Close() }
