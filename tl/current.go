package tl

import (
	"bytes"
	"runtime"
	"strconv"
	"sync"
	"weak"
)

// A nil *Tensor, a zero Block or a zero IfStmt carries no *Func to record
// its error in. The Func this goroutine is building (set by NewFunc and
// Kernel, dropped by Build) takes it instead, so that Build reports the
// mistake rather than the call panicking. The pointers are weak: a Func
// never built is collected as usual, and its entry pruned.
var current struct {
	sync.Mutex
	by map[uint64]weak.Pointer[Func]
}

// goid is the running goroutine's id, read from its stack header
// ("goroutine 12 [running]:"); only the error paths and a Func's start
// and end pay for it.
func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, _ := strconv.ParseUint(string(b), 10, 64)
	return id
}

// setCurrent makes f the Func this goroutine builds and returns the one
// it replaces.
func setCurrent(f *Func) *Func {
	id := goid()
	current.Lock()
	defer current.Unlock()
	if current.by == nil {
		current.by = map[uint64]weak.Pointer[Func]{}
	}
	old := current.by[id].Value()
	if f == nil {
		delete(current.by, id)
		return old
	}
	if len(current.by) >= 1024 { // entries of goroutines gone: drop the collected
		for k, p := range current.by {
			if p.Value() == nil {
				delete(current.by, k)
			}
		}
	}
	current.by[id] = weak.Make(f)
	return old
}

// dropCurrent forgets f as this goroutine's Func, if it still is.
func dropCurrent(f *Func) {
	id := goid()
	current.Lock()
	defer current.Unlock()
	if current.by[id].Value() == f {
		delete(current.by, id)
	}
}

// orphan is the Func to record an error in for a receiver that has none:
// this goroutine's, or a throwaway one when it builds none (the error
// then has nowhere to go, but the call still does not panic).
func orphan() *Func {
	id := goid()
	current.Lock()
	f := current.by[id].Value()
	current.Unlock()
	if f == nil {
		f = &Func{}
		f.init()
	}
	return f
}
