package kernels

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// ParseConfig sets fields of base from s, a list of name=value pairs
// separated by spaces or commas, named as ConfigFields names them (m=128
// n=64 ws=true); a bare name sets a bool field. Fields it does not name
// keep base's values. base must be a config struct (AttnConfig,
// GemmConfig, MLAConfig, ...).
func ParseConfig(base Config, s string) (Config, error) {
	v := reflect.New(reflect.TypeOf(base)).Elem()
	v.Set(reflect.ValueOf(base))
	if v.Kind() != reflect.Struct {
		return nil, fmt.Errorf("config %T has no fields to set", base)
	}
	for _, pair := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		name, val, hasVal := strings.Cut(pair, "=")
		f := field(v, name)
		if !f.IsValid() {
			return nil, fmt.Errorf("config %s: %T has no field %q (it has %s)", pair, base, name, fieldNames(v))
		}
		switch {
		case f.Kind() == reflect.Bool:
			b := true
			if hasVal {
				var err error
				if b, err = strconv.ParseBool(val); err != nil {
					return nil, fmt.Errorf("config %s=%q: want true or false", name, val)
				}
			}
			f.SetBool(b)
		case f.CanInt() && !hasStringer(f):
			n, err := strconv.Atoi(val)
			if errors.Is(err, strconv.ErrRange) {
				return nil, fmt.Errorf("config %s=%s: %s", name, val, tooFar(val))
			}
			if err != nil || !hasVal {
				return nil, fmt.Errorf("config %s=%q: want a whole number", name, val)
			}
			if why := checkField(v.Type(), strings.ToLower(name), n); why != "" {
				return nil, fmt.Errorf("config %s=%d: %s", strings.ToLower(name), n, why)
			}
			f.SetInt(int64(n))
		default:
			return nil, fmt.Errorf("config %s: %s cannot be set from the command line", pair, name)
		}
	}
	c := v.Interface().(Config)
	if err := checkPairs(c); err != nil {
		return nil, err
	}
	return c, nil
}

// field is v's exported field whose lower-cased name is name.
func field(v reflect.Value, name string) reflect.Value {
	for i := range v.NumField() {
		if sf := v.Type().Field(i); sf.IsExported() && strings.EqualFold(sf.Name, name) {
			return v.Field(i)
		}
	}
	return reflect.Value{}
}

func fieldNames(v reflect.Value) string {
	var names []string
	for i := range v.NumField() {
		if sf := v.Type().Field(i); sf.IsExported() {
			names = append(names, strings.ToLower(sf.Name))
		}
	}
	return strings.Join(names, ", ")
}

// hasStringer: named values such as ir.Policy print as names, not numbers.
func hasStringer(f reflect.Value) bool {
	_, ok := f.Interface().(fmt.Stringer)
	return ok
}

// tooFar names which way a number past int's range went.
func tooFar(val string) string {
	if strings.HasPrefix(strings.TrimSpace(val), "-") {
		return "too small"
	}
	return "too large"
}
