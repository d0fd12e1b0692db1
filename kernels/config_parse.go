package kernels

import (
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
			return nil, fmt.Errorf("config: %T has no field %q (it has %s)", base, name, fieldNames(v))
		}
		switch {
		case f.Kind() == reflect.Bool:
			b := true
			if hasVal {
				var err error
				if b, err = strconv.ParseBool(val); err != nil {
					return nil, fmt.Errorf("config: %s=%q: want true or false", name, val)
				}
			}
			f.SetBool(b)
		case f.CanInt() && !hasStringer(f):
			n, err := strconv.Atoi(val)
			if err != nil || !hasVal {
				return nil, fmt.Errorf("config: %s=%q: want a whole number", name, val)
			}
			f.SetInt(int64(n))
		default:
			return nil, fmt.Errorf("config: %s cannot be set from the command line", name)
		}
	}
	return v.Interface().(Config), nil
}

// field is v's exported field whose lower-cased name is name.
func field(v reflect.Value, name string) reflect.Value {
	for i := range v.NumField() {
		if sf := v.Type().Field(i); sf.IsExported() && strings.ToLower(sf.Name) == strings.ToLower(name) {
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
