package main

import (
	"fmt"
	"io"
	"strconv"

	"github.com/tilego/tilego/kernels"
)

// help prints the usage of a command or the shape flags of a kernel.
func help(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stdout)
		return 0
	}
	for _, c := range commands {
		if c.name == args[0] {
			c.usage(stdout)
			return 0
		}
	}
	if e, err := kernels.Lookup(args[0]); err == nil {
		printKernel(stdout, e)
		return 0
	}
	fmt.Fprintf(stderr, "tilego help: no command or kernel %q\n", args[0])
	return 2
}

// printKernel shows a kernel's name, description and shape flags.
func printKernel(w io.Writer, e *kernels.Entry) {
	fmt.Fprintf(w, "%s: %s\n", e.Name, e.Doc)
	for _, f := range e.Flags {
		def := ""
		if f.Default != "" && !(f.Bool && f.Default == "false") {
			def = " (default " + f.Default + ")"
		}
		printFlag(w, f.Name, argName(f), f.Help+def)
	}
}

func printFlag(w io.Writer, name, arg, help string) {
	left := "--" + name
	if arg != "" {
		left += " " + arg
	}
	if len(left) > 20 {
		fmt.Fprintf(w, "  %s\n  %-20s %s\n", left, "", help)
		return
	}
	fmt.Fprintf(w, "  %-20s %s\n", left, help)
}

// argName is the placeholder of a flag's value in help text.
func argName(f kernels.Flag) string {
	switch {
	case f.Bool:
		return ""
	case f.Arg != "":
		return f.Arg
	case f.Default == "":
		return "N"
	}
	if _, err := strconv.Atoi(f.Default); err == nil {
		return "N"
	}
	if _, err := strconv.ParseFloat(f.Default, 64); err == nil {
		return "X"
	}
	return "NAME"
}
