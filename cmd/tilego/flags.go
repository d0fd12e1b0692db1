package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/tilego/tilego/kernels"
)

// shapeFlag is one of a kernel's shape flags on a command line.
type shapeFlag struct {
	f   kernels.Flag
	val string
	set bool
}

func (s *shapeFlag) String() string {
	if s == nil {
		return ""
	}
	return s.val
}
func (s *shapeFlag) Set(v string) error {
	if strings.TrimSpace(v) == "" { // a kernel reads "" as its default, which for some is 0
		return errors.New("empty; give a value, or leave the flag out for its default")
	}
	s.val, s.set = v, true
	return nil
}
func (s *shapeFlag) IsBoolFlag() bool { return s.f.Bool }

// kernelFlags is a FlagSet for "tilego CMD KERNEL [flags]": the kernel's
// shape flags, then the command's own.
type kernelFlags struct {
	cmd   string
	entry *kernels.Entry
	fs    *flag.FlagSet
	shape []*shapeFlag
}

// newKernelFlags reads the kernel name, args[0], and defines its shape flags.
func newKernelFlags(cmd string, args []string) (*kernelFlags, error) {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return nil, fmt.Errorf("name a kernel: tilego %s KERNEL [flags] (tilego list shows them)", cmd)
	}
	e, err := kernels.Lookup(args[0])
	if err != nil {
		return nil, err
	}
	k := &kernelFlags{cmd: cmd, entry: e, fs: flag.NewFlagSet(cmd+" "+e.Name, flag.ContinueOnError)}
	for _, f := range e.Flags {
		s := &shapeFlag{f: f, val: f.Default}
		k.fs.Var(s, f.Name, f.Help)
		k.shape = append(k.shape, s)
	}
	return k, nil
}

// parse parses the flags after the kernel name. help reports --help, which
// prints usage to stdout; bad flags print to stderr.
func (k *kernelFlags) parse(args []string, stdout, stderr io.Writer, usage func(io.Writer)) (help bool, err error) {
	for _, a := range args {
		if a == "--" {
			break
		}
		if isHelp(a) {
			usage(stdout)
			return true, nil
		}
	}
	k.fs.SetOutput(io.Discard) // we print the error ourselves, with a pointer to help
	if err := k.fs.Parse(args); err != nil {
		return false, fmt.Errorf("%v (tilego %s %s --help lists the flags)", flagErr(k.fs, err), k.cmd, k.entry.Name)
	}
	if k.fs.NArg() > 0 {
		return false, fmt.Errorf("unexpected argument %q (flags are --name value)", k.fs.Arg(0))
	}
	return false, nil
}

// problem is the kernel at the shape the flags give.
func (k *kernelFlags) problem() (kernels.Problem, error) {
	vals := map[string]string{}
	for _, s := range k.shape {
		if s.set {
			vals[s.f.Name] = s.val
		}
	}
	return k.entry.Problem(vals)
}

// printOwnFlags lists the flags of fs that are not shape flags.
func (k *kernelFlags) printOwnFlags(w io.Writer) {
	printCommandFlags(w, k.fs, func(name string) bool {
		for _, s := range k.shape {
			if s.f.Name == name {
				return false
			}
		}
		return true
	})
}

// printCommandFlags lists fs's flags that keep selects, with their
// defaults.
func printCommandFlags(w io.Writer, fs *flag.FlagSet, keep func(string) bool) {
	fs.VisitAll(func(f *flag.Flag) {
		if !keep(f.Name) {
			return
		}
		arg, help := argNames[f.Name], f.Usage
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			help += " (default " + f.DefValue + ")"
		}
		printFlag(w, f.Name, arg, help)
	})
}

// argNames are the placeholders of the commands' own flags in help text.
var argNames = map[string]string{
	"backend":   "auto|cpu|gpu|hip|hip-emu",
	"max-gflop": "X",
	"repeats":   "N",
	"seed":      "N",
	"target":    "ir|sm_80|sm_90a",
}

// exitErr is an error with an exit status.
type exitErr struct {
	code int
	err  error
}

func (e *exitErr) Error() string { return e.err.Error() }

// report prints err as "tilego CMD: err" and returns its exit status (1
// unless it says otherwise).
func report(stderr io.Writer, cmd string, err error) int {
	msg := strings.ReplaceAll(oneProblemLine(err.Error()), "\n", "\n  ") // an ir.ErrorList: one problem a line
	fmt.Fprintf(stderr, "tilego %s: %s\n", cmd, msg)
	var e *exitErr
	if errors.As(err, &e) {
		return e.code
	}
	return 1
}

// oneProblemLine joins "...does not build:\nfile:line: problem", a list of
// one problem, into one line.
func oneProblemLine(msg string) string {
	head, rest, ok := strings.Cut(msg, "\n")
	if ok && strings.HasSuffix(head, ":") && !strings.Contains(rest, "\n") {
		return head + " " + strings.TrimSpace(rest)
	}
	return msg
}

func usageErr(err error) error { return &exitErr{code: 2, err: err} }

// withConfig names the config in an error that does not already (a
// lowering's error points at the kernel's source line, not at the config
// that made it fail).
func withConfig(err error, cfg kernels.Config) error {
	fields := kernels.ConfigFields(cfg).String()
	if strings.Contains(err.Error(), fields) {
		return err
	}
	return fmt.Errorf("config %s: %w", fields, err)
}
