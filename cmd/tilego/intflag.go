package main

import (
	"errors"
	"flag"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// intFlag is an int flag bounded to lo..hi, whose errors say which bound a
// value broke ("too large"), where the flag package prints strconv's.
type intFlag struct {
	p      *int
	lo, hi int
}

// boundedInt defines an int flag of fs with the given bounds.
func boundedInt(fs *flag.FlagSet, p *int, name string, def, lo, hi int, usage string) {
	*p = def
	fs.Var(&intFlag{p, lo, hi}, name, usage)
}

func (f *intFlag) String() string {
	if f == nil || f.p == nil {
		return "0"
	}
	return strconv.Itoa(*f.p)
}

func (f *intFlag) Set(s string) error {
	n, err := strconv.Atoi(s)
	switch {
	case errors.Is(err, strconv.ErrRange) && len(s) > 0 && s[0] == '-':
		return fmt.Errorf("too small (at least %d)", f.lo)
	case errors.Is(err, strconv.ErrRange):
		return fmt.Errorf("too large (at most %d)", f.hi)
	case err != nil:
		return errors.New("not an integer")
	case n > f.hi:
		return fmt.Errorf("too large (at most %d)", f.hi)
	case n < f.lo:
		return fmt.Errorf("must be at least %d", f.lo)
	}
	*f.p = n
	return nil
}

// flagValueErr matches the flag package's "invalid value" errors, to say
// them as this CLI's other errors: "--NAME VALUE: why".
var flagValueErr = regexp.MustCompile(`^invalid (?:boolean )?value "(.*)" for flag -([^:]+): (.*)$`)

// flagErr rewords fs's parse error.
func flagErr(fs *flag.FlagSet, err error) error {
	m := flagValueErr.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	why := m[3]
	if why == "parse error" || why == "value out of range" {
		why = "not " + wanted(fs.Lookup(m[2]))
	}
	val := m[1]
	if strings.TrimSpace(val) == "" {
		val = strconv.Quote(val)
	}
	return fmt.Errorf("--%s %s: %s", m[2], val, why)
}

// wanted names the kind of value f takes, for an error.
func wanted(f *flag.Flag) string {
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return "a valid value"
	}
	switch g.Get().(type) {
	case time.Duration:
		return "a duration (such as 90s or 5m)"
	case bool:
		return "true or false"
	case uint64:
		return "an integer from 0 to 2^64-1"
	case float64:
		return "a number"
	}
	return "a valid value"
}

// maxRepeats bounds timed launches (run, tune, bench): each keeps a pair
// of events and a time.
const maxRepeats = 100000
