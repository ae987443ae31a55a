//go:build !unix

package workspace

import (
	"errors"
	"io"
	"os"
	"slices"
)

// readPooled reads abs into the pooled buffer *bp, growing it as needed.
func readPooled(abs string, bp *[]byte) ([]byte, error) {
	f, err := os.Open(abs)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := (*bp)[:0]
	if fi, err := f.Stat(); err == nil && int64(cap(buf)) < fi.Size()+1 {
		buf = make([]byte, 0, fi.Size()+512)
	}
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, cap(buf))
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) || (err == nil && n == 0) {
			break
		}
		if err != nil {
			*bp = buf
			return nil, err
		}
	}
	*bp = buf
	return buf, nil
}
