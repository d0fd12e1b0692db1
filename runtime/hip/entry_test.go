package hip

// Before a successful Open, every exported entry point returns an error and
// none panics: with no runtime, on nil and zero values of every handle type,
// and on handles whose device was never opened.

import (
	"fmt"
	"reflect"
	"testing"
)

// outcome is what calling one method did.
type outcome struct {
	panicked any   // the value it panicked with, or nil
	hasErr   bool  // its last result is an error
	err      error // that error
}

// callAll calls every exported method of recv with zero arguments, Close
// last: it may change recv.
func callAll(recv any) map[string]outcome {
	out := map[string]outcome{}
	v := reflect.ValueOf(recv)
	var idx []int
	for i := range v.NumMethod() {
		if v.Type().Method(i).Name != "Close" {
			idx = append(idx, i)
		}
	}
	if c, ok := v.Type().MethodByName("Close"); ok {
		idx = append(idx, c.Index)
	}
	for _, i := range idx {
		m := v.Method(i)
		args := make([]reflect.Value, m.Type().NumIn())
		for j := range args {
			args[j] = reflect.Zero(m.Type().In(j))
		}
		var o outcome
		func() {
			defer func() { o.panicked = recover() }()
			res := m.Call(args)
			if n := len(res); n > 0 && res[n-1].Type() == reflect.TypeFor[error]() {
				o.hasErr = true
				o.err, _ = res[n-1].Interface().(error)
			}
		}()
		out[v.Type().Method(i).Name] = o
	}
	return out
}

func TestMethodsBeforeOpen(t *testing.T) {
	withCandidates(t, []string{"/nonexistent/libamdhip64.so.6"})
	unopened := &Device{Ordinal: 0} // not from Open: no runtime bound
	receivers := []any{
		(*Device)(nil), unopened,
		(*Module)(nil), &Module{}, &Module{d: unopened, h: 1},
		(*Function)(nil), &Function{}, &Function{m: &Module{d: unopened, h: 1}, h: 1, name: "k"},
		(*Stream)(nil), &Stream{}, &Stream{d: unopened, h: 1},
		(*Event)(nil), &Event{}, &Event{d: unopened, h: 1},
	}
	for _, recv := range receivers {
		_, isDevice := recv.(*Device)
		for method, o := range callAll(recv) {
			what := fmt.Sprintf("(%T %+v).%s", recv, recv, method)
			switch {
			case o.panicked != nil:
				t.Errorf("%s panicked: %v", what, o.panicked)
			case !o.hasErr:
				// Arch, String, Name: nothing to report, only not to panic.
			case method == "Close" && !isDevice:
				// Closing a module, stream or event that holds nothing does
				// nothing; one whose device is unopened may also say so.
			case o.err == nil:
				t.Errorf("%s returned no error before Open", what)
			}
		}
	}
}

func TestFunctionsBeforeOpen(t *testing.T) {
	withCandidates(t, []string{"/nonexistent/libamdhip64.so.6"})
	var d *Device
	unopened := &Device{}
	fn := &Function{m: &Module{d: unopened, h: 1}, h: 1, name: "k"}
	calls := map[string]func() error{
		"Available":      Available,
		"Open":           func() error { _, err := Open(0); return err },
		"RuntimeVersion": func() error { _, err := RuntimeVersion(); return err },
		"DriverVersion":  func() error { _, err := DriverVersion(); return err },
		"DeviceCount":    func() error { _, err := DeviceCount(); return err },
		"Launch nil":     func() error { return Launch(nil, [3]int{1, 1, 1}, [3]int{64, 1, 1}, 0, nil) },
		"Launch":         func() error { return Launch(fn, [3]int{1, 1, 1}, [3]int{64, 1, 1}, 0, nil, int32(1)) },
		"Sync nil":       func() error { return Sync(nil, nil) },
		"Sync":           func() error { return Sync(fn, nil) },
		"ElapsedTime":    func() error { _, err := ElapsedTime(nil, nil); return err },
		"ElapsedTime unopened": func() error {
			_, err := ElapsedTime(&Event{d: unopened, h: 1}, &Event{d: unopened, h: 2})
			return err
		},
		"Upload":         func() error { _, err := Upload(d, []float32{1}); return err },
		"CopyToDevice":   func() error { return CopyToDevice(unopened, Buffer{Ptr: 1, Size: 4}, []float32{1}) },
		"CopyFromDevice": func() error { return CopyFromDevice(d, make([]int32, 1), Buffer{Ptr: 1, Size: 4}) },
		"Free zero":      func() error { return unopened.Free(Buffer{}) },
		"CopyHtoD empty": func() error { return unopened.CopyHtoD(Buffer{}, nil) },
	}
	for name, call := range calls {
		err := func() (err error) {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("panic: %v", r)
					t.Errorf("%s panicked: %v", name, r)
				}
			}()
			return call()
		}()
		if err == nil {
			t.Errorf("%s returned no error before Open", name)
		}
	}
	if p := RuntimePath(); p != "" {
		t.Errorf("RuntimePath = %q before loading", p)
	}
	if _, err := CodeObjectTarget(nil); err == nil {
		t.Error("CodeObjectTarget(nil) gave no error")
	}
}
