package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// With --json a command's stdout is JSON whatever happens: a failure is
// one object, {"ok":false,"error":"..."}, beside the usual line on stderr
// and with the usual exit status, so that a script reading stdout never
// has to parse text.

// jsonError is what --json prints for a failure.
type jsonError struct {
	OK    bool   `json:"ok"`
	Error string `json:"error"`
}

// shownErr is an error already printed in the command's JSON result (a
// result beyond tolerance): it gets no second object.
type shownErr struct{ error }

func (e shownErr) Unwrap() error { return e.error }

// wantsJSON reports whether args (a command's, before "--") ask for --json.
func wantsJSON(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "json" {
			continue
		}
		if !hasVal {
			return true
		}
		b, err := strconv.ParseBool(val)
		return err == nil && b
	}
	return false
}

// fail reports err as report does and, when asJSON, as a JSON object on
// stdout too. It returns the exit status.
func fail(stdout, stderr io.Writer, cmd string, err error, asJSON bool) int {
	code := report(stderr, cmd, err)
	var shown shownErr
	if asJSON && !errors.As(err, &shown) {
		b, _ := json.Marshal(jsonError{Error: err.Error()}) // a struct of strings: cannot fail
		fmt.Fprintf(stdout, "%s\n", b)
	}
	return code
}

// recovered turns a panic in a command into its error, so that the CLI
// prints one line (and with --json an object) rather than a Go trace.
func recovered(r any) error {
	return fmt.Errorf("internal error (a bug in tilego; please report it with the command line): %v", r)
}
