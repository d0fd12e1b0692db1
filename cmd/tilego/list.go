package main

import (
	"fmt"
	"io"

	"github.com/tilego/tilego/kernels"
)

var listCmd = &command{
	name: "list", summary: "list the kernels and their shape flags",
	main: listMain, usage: listUsage,
}

func listUsage(w io.Writer) {
	fmt.Fprintln(w, "Usage: tilego list\n\nLists the library's kernels, each with its shape flags and their defaults.")
}

func listMain(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		if isHelp(args[0]) {
			listUsage(stdout)
			return 0
		}
		fmt.Fprintf(stderr, "tilego list: takes no arguments, got %q\n", args[0])
		return 2
	}
	for i, e := range kernels.Entries {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		printKernel(stdout, e)
	}
	return 0
}

func isHelp(arg string) bool { return arg == "-h" || arg == "-help" || arg == "--help" }
