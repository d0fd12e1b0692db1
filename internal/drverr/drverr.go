// Package drverr writes the message of a failed GPU driver or runtime call
// for runtime/cuda and runtime/hip, whose Error types carry the same
// fields: the entry point, the error's name and code, the kernel, a
// description and a compiler log.
package drverr

import (
	"fmt"
	"strings"
)

// Message is "api: call (kernel "k"): NAME (code): detail", then the log
// on the lines after; an empty name reads "unknown error", and an empty
// kernel, detail or log is left out.
func Message(api, call, kernel, name string, code int, detail, log string) string {
	var b strings.Builder
	b.WriteString(api)
	b.WriteString(": ")
	b.WriteString(call)
	if kernel != "" {
		fmt.Fprintf(&b, " (kernel %q)", kernel)
	}
	b.WriteString(": ")
	if name == "" {
		name = "unknown error"
	}
	fmt.Fprintf(&b, "%s (%d)", name, code)
	if detail != "" {
		b.WriteString(": ")
		b.WriteString(detail)
	}
	if log = strings.TrimSpace(log); log != "" {
		b.WriteString("\n")
		b.WriteString(log)
	}
	return b.String()
}
