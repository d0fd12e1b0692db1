package kernels

import (
	"fmt"
	"reflect"
)

// The domains of config fields a command line may set. ParseConfig checks
// a field against its rule as it sets it, so that `--config m=0` says which
// field is wrong and why rather than failing later in the builder (or, for
// sizes no GPU has, in an allocation of the emitter). Rules are loose
// enough for every config the registry and the autotuner use; what depends
// on the shape or the target is left to the kernel's own checks.

// fieldRule is the domain of one int field: lo..hi, a multiple of mult;
// zero (when zeroOK) means "the default" where the field is optional.
type fieldRule struct {
	lo, hi, mult int
	zeroOK       bool
}

func (r fieldRule) check(n int) string {
	switch {
	case n == 0 && r.zeroOK:
		return ""
	case n > r.hi:
		return fmt.Sprintf("too large (at most %d)", r.hi)
	case r.mult > 1 && (n < r.lo || n%r.mult != 0): // lo is mult where a rule has both
		if r.zeroOK {
			return fmt.Sprintf("must be 0 or a positive multiple of %d", r.mult)
		}
		return fmt.Sprintf("must be a positive multiple of %d", r.mult)
	case n < r.lo:
		if r.zeroOK {
			return fmt.Sprintf("must be 0 or at least %d", r.lo)
		}
		return fmt.Sprintf("must be at least %d", r.lo)
	}
	return ""
}

// maxTile bounds a tile's rows or columns: far past what shared memory or
// registers hold, short of sizes whose products overflow.
const maxTile = 1024

var (
	tile      = func(mult int) fieldRule { return fieldRule{lo: mult, hi: maxTile, mult: mult} }
	stages    = fieldRule{lo: 1, hi: 16}
	threads   = fieldRule{lo: 32, hi: 1024, mult: 32} // a whole number of warps, at most a block's
	clusterOf = fieldRule{lo: 2, hi: 2, zeroOK: true} // pairs of blocks, or none
)

// fieldRules are the rules of each config type, by field name as
// ConfigFields prints it.
var fieldRules = map[reflect.Type]map[string]fieldRule{
	reflect.TypeFor[AttnConfig](): {
		"m": tile(16), "n": tile(16), "stages": stages, "threads": threads, "cluster": clusterOf,
	},
	reflect.TypeFor[GemmConfig](): {
		"bm": tile(16), "bn": tile(8), "bk": tile(16), "stages": stages, "threads": threads,
		"raster": {lo: 1, hi: 1 << 16, zeroOK: true},
	},
	reflect.TypeFor[MLAConfig](): {
		"m": {lo: 1, hi: maxTile}, "stages": stages, "threads": threads, "cluster": clusterOf,
		"v0": {lo: 64, hi: maxTile, mult: 64, zeroOK: true},
	},
}

// checkField says why n is outside the domain of c's field name, "" when
// it is inside (or the field has no rule).
func checkField(c reflect.Type, name string, n int) string {
	if r, ok := fieldRules[c][name]; ok {
		return r.check(n)
	}
	if n < 0 { // no config counts below zero
		return "must not be negative"
	}
	return ""
}

// checkPairs reports rules between fields: combinations the builder would
// take and the emitter could not lower.
func checkPairs(c Config) error {
	if m, ok := c.(MLAConfig); ok && m.SplitN && m.Threads < 128 {
		return fmt.Errorf("config splitn with threads=%d: splitn divides the columns among warpgroups; it needs at least 128 threads", m.Threads)
	}
	return nil
}
