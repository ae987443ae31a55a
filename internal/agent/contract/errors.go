package contract

import (
	"errors"
	"fmt"
)

// Error is a contract problem with where it is: the file, the 1-based line
// and column, and the field as a dotted path (verify.checks[0].timeout).
// Line and Col are 0 when the problem has no position (an empty file).
type Error struct {
	File  string
	Line  int
	Col   int
	Field string
	Msg   string
}

func (e *Error) Error() string {
	pos := e.File
	if e.Line > 0 {
		pos = fmt.Sprintf("%s:%d:%d", e.File, e.Line, e.Col)
	}
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", pos, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", pos, e.Field, e.Msg)
}

// ErrNotFound wraps the error of Load when the contract file does not exist.
var ErrNotFound = errors.New("contract file not found")
