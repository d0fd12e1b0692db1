package ir

import (
	"fmt"
	"strings"
)

// Error is a problem with a program: which op, where the program built it,
// and what is wrong.
type Error struct {
	Op  string
	Pos Pos
	Msg string
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s: %s", e.Pos, e.Op, e.Msg) }

// ErrorList collects every problem found in one program.
type ErrorList []*Error

func (l ErrorList) Error() string {
	parts := make([]string, len(l))
	for i, e := range l {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

// Err returns nil for an empty list, so callers can return it as an error.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}
