// Command tilego lists, runs, checks and prints the library's tile
// kernels:
//
//	tilego list                       the kernels and their shape flags
//	tilego run KERNEL [flags]         run one, compare it with float64, time it
//	tilego emit KERNEL [flags]        print the program (IR or CUDA C++)
//	tilego bench [--suite S]          time the library on the GPU against float64-checked results
//	tilego tune KERNEL [flags]        search a kernel's configs on the GPU; run uses the winner
//	tilego fuzz [--n N] [--seed S]    check random valid programs: interpreter vs both CUDA emitters (and the GPU)
//	tilego help [COMMAND | KERNEL]    explain the commands and their flags
package main

import (
	"fmt"
	"io"
	"os"
)

type command struct {
	name, args, summary string
	json                bool // takes --json: errors are JSON on stdout too
	main                func(args []string, stdout, stderr io.Writer) int
	usage               func(w io.Writer)
}

// commands are the subcommands, one file each.
var commands = []*command{listCmd, runCmd, emitCmd, benchCmd, tuneCmd, fuzzCmd}

func main() { os.Exit(tilego(os.Args[1:], os.Stdout, os.Stderr)) }

// tilego runs one command line and returns the exit status: 0 success, 1
// failure (a build error, a run error, a result beyond tolerance), 2 bad
// usage.
func tilego(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		return help(args[1:], stdout, stderr)
	}
	for _, c := range commands {
		if c.name == args[0] {
			return runCommand(c, args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "tilego: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

// runCommand runs c; a panic in it is reported as an internal error in
// one line, exit status 1.
func runCommand(c *command, args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			code = fail(stdout, stderr, c.name, recovered(r), c.json && wantsJSON(args))
		}
	}()
	return c.main(args, stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "tilego: tile-level GPU kernels in Go\n\nUsage:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  tilego %-28s %s\n", c.name+" "+c.args, c.summary)
	}
	fmt.Fprintf(w, "  tilego %-28s %s\n", "help [COMMAND | KERNEL]", "explain a command's or a kernel's flags")
	fmt.Fprintf(w, "\nExample:\n  tilego run flash-attention --seq-q 512 --causal\n")
}
