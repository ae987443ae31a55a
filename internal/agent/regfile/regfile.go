// Package regfile reads the files a user, a repository or an editor names
// for ioh-lsp to load (task contracts, configuration, replay cassettes):
// regular files only, of bounded size, opened so that a FIFO cannot block
// the open and checked on the opened descriptor, so what is checked is
// exactly what is read. /dev/zero, a FIFO, a directory or a file larger
// than the cap is refused before its content is read.
package regfile

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrNotRegular is returned for anything but a regular file (a device, a
// FIFO, a socket, a directory).
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is returned for a file larger than the caller's cap.
var ErrTooLarge = errors.New("file too large")

// Read opens path without blocking, checks on the open descriptor that it
// is a regular file of at most max bytes, and reads it, never more than
// max bytes even if the file grows meanwhile. Errors name the path and
// never its content.
func Read(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|nonblock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, kind(fi.Mode()))
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%s: %w: %d bytes, the limit is %d", path, ErrTooLarge, fi.Size(), max)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s: %w: it grew past the limit of %d bytes while being read", path, ErrTooLarge, max)
	}
	return data, nil
}

func kind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "mode " + m.Type().String()
}
