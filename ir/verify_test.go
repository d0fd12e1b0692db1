package ir

import (
	"slices"
	"strings"
	"testing"
)

func ints(v ...int64) []Expr {
	out := make([]Expr, len(v))
	for i, x := range v {
		out[i] = IntConst(x)
	}
	return out
}

func buf(name string, dt DType, scope Scope, shape ...int64) *Buffer {
	return &Buffer{Name: name, DType: dt, Scope: scope, Shape: ints(shape...)}
}

func TestRegion(t *testing.T) {
	b := buf("t", F16, Shared, 4, 8, 16)
	sym := &Buffer{Name: "g", DType: F16, Scope: Global, Shape: []Expr{&Var{Name: "n", Kind: SymSize}, IntConst(8)}}
	tests := []struct {
		name  string
		r     Region
		shape []int
		dims  []int
		whole bool
		str   string
	}{
		{"whole", Whole(b), []int{4, 8, 16}, []int{0, 1, 2}, true, "t"},
		{"a row", Region{Buf: b, Start: ints(2, 0, 0), Extent: []int{1, 8, 16}, Keep: []bool{false, true, true}},
			[]int{8, 16}, []int{1, 2}, false, "t[2, 0:+8, 0:+16]"},
		{"a column of tiles", Region{Buf: b, Start: ints(0, 3, 0), Extent: []int{4, 1, 16}, Keep: []bool{true, false, true}},
			[]int{4, 16}, []int{0, 2}, false, "t[0:+4, 3, 0:+16]"},
		{"an element", Region{Buf: b, Start: ints(1, 2, 3), Extent: []int{1, 1, 1}, Keep: []bool{false, false, false}},
			nil, nil, false, "t[1, 2, 3]"},
		{"part of a dim", Region{Buf: b, Start: ints(0, 0, 8), Extent: []int{4, 8, 8}, Keep: []bool{true, true, true}},
			[]int{4, 8, 8}, []int{0, 1, 2}, false, "t[0:+4, 0:+8, 8:+8]"},
		{"full extent but dropped", Region{Buf: b, Start: ints(0, 0, 0), Extent: []int{4, 8, 16}, Keep: []bool{true, false, true}},
			[]int{4, 16}, []int{0, 2}, false, "t[0:+4, 0, 0:+16]"},
		{"extent of 1 kept", Region{Buf: buf("u", F32, Fragment, 1, 4), Start: ints(0, 0), Extent: []int{1, 4}, Keep: []bool{true, true}},
			[]int{1, 4}, []int{0, 1}, true, "u"},
		{"symbolic start", Region{Buf: b, Start: []Expr{&Binary{Op: Mul, X: &Var{Name: "bx"}, Y: IntConst(2), T: I32}, IntConst(0), IntConst(0)}, Extent: []int{2, 8, 16}, Keep: []bool{true, true, true}},
			[]int{2, 8, 16}, []int{0, 1, 2}, false, "t[(bx * 2):+2, 0:+8, 0:+16]"},
		{"symbolic buffer", Region{Buf: sym, Start: ints(0, 0), Extent: []int{64, 8}, Keep: []bool{true, true}},
			[]int{64, 8}, []int{0, 1}, false, "g[0:+64, 0:+8]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.r.Shape(); !slices.Equal(got, tc.shape) {
				t.Errorf("Shape = %v; want %v", got, tc.shape)
			}
			if got := tc.r.Dims(); !slices.Equal(got, tc.dims) {
				t.Errorf("Dims = %v; want %v", got, tc.dims)
			}
			if got := tc.r.IsWhole(); got != tc.whole {
				t.Errorf("IsWhole = %v; want %v", got, tc.whole)
			}
			if got := RegionString(tc.r); got != tc.str {
				t.Errorf("RegionString = %s; want %s", got, tc.str)
			}
		})
	}
	if s := RegionString(Region{}); s != "<nil>" {
		t.Errorf("RegionString of an empty region = %s", s)
	}
}

func TestBufferShape(t *testing.T) {
	b := buf("t", BF16, Shared, 2, 3, 4)
	if s, ok := b.StaticShape(); !ok || !slices.Equal(s, []int{2, 3, 4}) {
		t.Errorf("StaticShape = %v, %v", s, ok)
	}
	if n := b.NumElems(); n != 24 {
		t.Errorf("NumElems = %d; want 24", n)
	}
	sym := &Buffer{Name: "g", Shape: []Expr{IntConst(4), &Var{Name: "n", Kind: SymSize}}}
	if s, ok := sym.StaticShape(); ok || s != nil {
		t.Errorf("StaticShape of a symbolic buffer = %v, %v", s, ok)
	}
	if n := sym.NumElems(); n != 0 {
		t.Errorf("NumElems of a symbolic buffer = %d; want 0", n)
	}
	if n := buf("s", F32, Local).NumElems(); n != 1 {
		t.Errorf("NumElems of a 0-d buffer = %d; want 1", n)
	}
}

func TestDType(t *testing.T) {
	tests := []struct {
		d            DType
		name         string
		bits, bytes  int
		float, isInt bool
		compute      DType
	}{
		{Bool, "bool", 8, 1, false, false, Bool},
		{I32, "i32", 32, 4, false, true, I32},
		{I64, "i64", 64, 8, false, true, I64},
		{F16, "f16", 16, 2, true, false, F32},
		{BF16, "bf16", 16, 2, true, false, F32},
		{F32, "f32", 32, 4, true, false, F32},
		{F8E4M3, "f8e4m3", 8, 1, true, false, F32},
		{F8E5M2, "f8e5m2", 8, 1, true, false, F32},
	}
	for _, tc := range tests {
		if s := tc.d.String(); s != tc.name {
			t.Errorf("String(%d) = %s; want %s", tc.d, s, tc.name)
		}
		d, err := ParseDType(tc.name)
		if err != nil || d != tc.d {
			t.Errorf("ParseDType(%q) = %v, %v; want %v", tc.name, d, err, tc.d)
		}
		if d.Bits() != tc.bits || d.Bytes() != tc.bytes {
			t.Errorf("%s: Bits, Bytes = %d, %d; want %d, %d", d, d.Bits(), d.Bytes(), tc.bits, tc.bytes)
		}
		if d.IsFloat() != tc.float || d.IsInt() != tc.isInt || d.Compute() != tc.compute {
			t.Errorf("%s: IsFloat, IsInt, Compute = %v, %v, %s", d, d.IsFloat(), d.IsInt(), d.Compute())
		}
		if !d.Valid() {
			t.Errorf("%s is not Valid", d)
		}
	}
	// Every valid DType round-trips through its name.
	for d := DType(0); d < 255; d++ {
		if !d.Valid() {
			continue
		}
		if got, err := ParseDType(d.String()); err != nil || got != d {
			t.Errorf("ParseDType(%s) = %v, %v", d, got, err)
		}
	}
	for _, s := range []string{"", "invalid", "F16", "float16", "fp32", "dtype(99)"} {
		d, err := ParseDType(s)
		if err == nil || d != Invalid || !strings.Contains(err.Error(), "unknown dtype") {
			t.Errorf("ParseDType(%q) = %v, %v; want an unknown dtype error", s, d, err)
		}
	}
	for _, d := range []DType{Invalid, DType(99)} {
		if d.Valid() || d.Bits() != 0 || d.Bytes() != 0 || d.IsFloat() || d.IsInt() {
			t.Errorf("%s: Valid %v, Bits %d, Bytes %d, IsFloat %v, IsInt %v", d, d.Valid(), d.Bits(), d.Bytes(), d.IsFloat(), d.IsInt())
		}
	}
	if s := DType(99).String(); s != "dtype(99)" {
		t.Errorf("String(99) = %s", s)
	}
}

func TestSharedBytes(t *testing.T) {
	k := &Kernel{Allocs: []*Buffer{
		buf("a", F16, Shared, 64, 32),     // 4096
		buf("b", F8E4M3, Shared, 32, 128), // 4096
		buf("c", F32, Shared, 16),         // 64
		buf("acc", F32, Fragment, 64, 64), // registers: not counted
		buf("v", I64, Local, 8),           // registers: not counted
	}}
	if n := k.SharedBytes(); n != 4096+4096+64 {
		t.Errorf("SharedBytes = %d; want %d", n, 4096+4096+64)
	}
	if n := (&Kernel{}).SharedBytes(); n != 0 {
		t.Errorf("SharedBytes of no allocs = %d", n)
	}
}

func TestOutputsAndConstInt(t *testing.T) {
	a, o := buf("A", F16, Global, 4), buf("O", F16, Global, 4)
	o.Output = true
	f := &Func{Params: []*Buffer{a, o}}
	if out := f.Outputs(); len(out) != 1 || out[0] != o {
		t.Errorf("Outputs = %v", out)
	}
	for _, tc := range []struct {
		e  Expr
		v  int64
		ok bool
	}{
		{IntConst(7), 7, true},
		{&Const{T: I64, I: -2}, -2, true},
		{&Const{T: F32, F: 1}, 0, false},
		{&Const{T: Bool, I: 1}, 0, false},
		{&Var{Name: "x"}, 0, false},
		{nil, 0, false},
	} {
		if v, ok := ConstInt(tc.e); v != tc.v || ok != tc.ok {
			t.Errorf("ConstInt(%s) = %d, %v; want %d, %v", ExprString(tc.e), v, ok, tc.v, tc.ok)
		}
	}
}

// TestVerifyRaw checks programs built by hand, malformed in ways the tl
// builder does not allow, so only the verifier can catch them.
func TestVerifyRaw(t *testing.T) {
	pos := Pos{File: "/src/raw.go", Line: 7}
	at := At{P: pos}
	newFunc := func(body ...Stmt) (*Func, *Buffer, *Buffer) {
		a := buf("A", F16, Global, 64, 64)
		s := buf("s", F16, Shared, 64, 64)
		a.Pos, s.Pos = pos, pos
		k := &Kernel{At: at, Grid: ints(1), Threads: 128, Idx: []*Var{{Name: "bx", Kind: BlockIdx}}, Allocs: []*Buffer{s}, Body: body}
		return &Func{Name: "raw", Params: []*Buffer{a}, Kernel: k}, a, s
	}
	i := &Var{Name: "i", Kind: LoopVar}
	tests := []struct {
		name string
		edit func(f *Func, a, s *Buffer)
		want string
	}{
		{"param in shared memory", func(f *Func, a, s *Buffer) { a.Scope = Shared },
			"raw.go:7: param: A: parameters live in global memory, not shared"},
		{"duplicate parameter", func(f *Func, a, s *Buffer) { f.Params = append(f.Params, a) },
			`raw.go:7: param: duplicate name "A"`},
		{"invalid param dtype", func(f *Func, a, s *Buffer) { a.DType = Invalid },
			"raw.go:7: param: A: invalid element type invalid"},
		{"no grid", func(f *Func, a, s *Buffer) { f.Kernel.Grid, f.Kernel.Idx = nil, nil },
			"raw.go:7: kernel: grid has 0 dims; want 1 to 3"},
		{"negative late start", func(f *Func, a, s *Buffer) { f.Kernel.LateStart = -1 },
			"raw.go:7: kernel: late start of -1 cycles: want 0 or more"},
		{"symbolic shared tile", func(f *Func, a, s *Buffer) { s.Shape[0] = &Var{Name: "n", Kind: SymSize} },
			"raw.go:7: alloc: s: on-chip buffers need a constant shape"},
		{"global alloc", func(f *Func, a, s *Buffer) { s.Scope = Global },
			"raw.go:7: alloc: s: on-chip buffers need a constant shape in shared, fragment or local scope"},
		{"region with too few dims", func(f *Func, a, s *Buffer) {
			f.Kernel.Body = []Stmt{&Copy{At: at, Src: Region{Buf: a, Start: ints(0), Extent: []int{64}, Keep: []bool{true}}, Dst: Whole(s)}}
		}, "raw.go:7: copy: region of A has 1 dims; the buffer has 2"},
		{"global region starting past the edge", func(f *Func, a, s *Buffer) {
			f.Kernel.Body = []Stmt{&Copy{At: at, Src: Region{Buf: a, Start: ints(64, 0), Extent: []int{64, 64}, Keep: []bool{true, true}}, Dst: Whole(s)}}
		}, "raw.go:7: copy: region of A starts at 64 in dim 0, outside its size 64"},
		{"unbound variable", func(f *Func, a, s *Buffer) {
			f.Kernel.Body = []Stmt{&Fill{At: at, Dst: Region{Buf: s, Start: []Expr{&Var{Name: "by", Kind: BlockIdx}, IntConst(0)}, Extent: []int{1, 64}, Keep: []bool{false, true}}, Value: IntConst(0)}}
		}, "raw.go:7: fill: variable by is used outside the loop or kernel that binds it"},
		{"shared region larger than its tile", func(f *Func, a, s *Buffer) {
			f.Kernel.Body = []Stmt{&Fill{At: at, Dst: Region{Buf: s, Start: []Expr{f.Kernel.Idx[0], IntConst(0)}, Extent: []int{128, 64}, Keep: []bool{true, true}}, Value: IntConst(0)}}
		}, "raw.go:7: fill: region of s has extent 128 in dim 0, larger than its size 64"},
		{"fill with no buffer", func(f *Func, a, s *Buffer) {
			f.Kernel.Body = []Stmt{&Fill{At: at, Dst: Region{}, Value: IntConst(0)}}
		}, "raw.go:7: fill: missing buffer"},
		{"copy with no buffer", func(f *Func, a, s *Buffer) {
			f.Kernel.Body = []Stmt{&Copy{At: at, Src: Whole(s), Dst: Region{}}}
		}, "raw.go:7: copy: missing buffer"},
		{"atomic add with no buffer", func(f *Func, a, s *Buffer) {
			f.Kernel.Body = []Stmt{&AtomicAdd{At: at, Src: Region{}, Dst: Whole(a)}}
		}, "raw.go:7: atomic_add: missing buffer"},
		{"ticket from a shared counter", func(f *Func, a, s *Buffer) {
			one := Region{Buf: s, Start: ints(0, 0), Extent: []int{1, 1}, Keep: []bool{false, false}}
			f.Kernel.Body = []Stmt{&Ticket{At: at, Counter: one, Dst: one}}
		}, "raw.go:7: ticket: the counter must be one element of a global i32 tensor, got s[0, 0] (shared f16)"},
		{"ticket into a global tile", func(f *Func, a, s *Buffer) {
			one := Region{Buf: a, Start: ints(0, 0), Extent: []int{1, 1}, Keep: []bool{false, false}}
			f.Kernel.Body = []Stmt{&Ticket{At: at, Counter: one, Dst: one}}
		}, "ticket: the ticket lands in one element of a shared i32 tile, got A[0, 0] (global f16)"},
		{"signal on a shared counter", func(f *Func, a, s *Buffer) {
			f.Kernel.Body = []Stmt{&Signal{At: at, Counter: Region{Buf: s, Start: ints(0, 0), Extent: []int{1, 1}, Keep: []bool{false, false}}}}
		}, "raw.go:7: signal: the counter must be one element of a global i32 tensor, got s[0, 0] (shared f16)"},
		{"wait for a count the program adds to", func(f *Func, a, s *Buffer) {
			c := buf("C", I32, Global, 4)
			c.Pos, c.Output = pos, true
			f.Params = append(f.Params, c)
			f.Kernel.Body = []Stmt{&WaitCount{At: at, Counter: Region{Buf: c, Start: ints(0), Extent: []int{1}, Keep: []bool{false}}, Min: IntConst(1)}}
		}, "raw.go:7: wait_count: the counter C is an output of this program: a block would wait for another block of its own grid, which may never run; wait for an earlier kernel's counter"},
		{"wait for a count the kernel's own blocks add to", func(f *Func, a, s *Buffer) {
			c := buf("C", I32, Global, 4)
			c.Pos, c.Output, c.Scratch = pos, true, true
			f.Params = append(f.Params, c)
			one := Region{Buf: c, Start: ints(0), Extent: []int{1}, Keep: []bool{false}}
			f.Kernel.Body = []Stmt{&Signal{At: at, Counter: one}, &WaitCount{At: at, Counter: one, Min: IntConst(1)}}
		}, "raw.go:7: wait_count: this kernel's blocks add to the counter C: a block would wait for another block of its own grid, which may never run; make the kernel Cooperative (every block at once)"},
		{"wait for a fractional count", func(f *Func, a, s *Buffer) {
			c := buf("C", I32, Global, 4)
			c.Pos = pos
			f.Params = append(f.Params, c)
			f.Kernel.Body = []Stmt{&WaitCount{At: at, Counter: Region{Buf: c, Start: ints(0), Extent: []int{1}, Keep: []bool{false}}, Min: &Const{T: F32, F: 1.5}}}
		}, "raw.go:7: wait_count: the count to wait for must be an i32, got f32"},
		{"prefetch of shared memory", func(f *Func, a, s *Buffer) {
			f.Kernel.Body = []Stmt{&Prefetch{At: at, Src: Whole(s)}}
		}, "raw.go:7: prefetch: s is not a global tensor: only global tiles can be prefetched"},
		{"prefetch past the edge", func(f *Func, a, s *Buffer) {
			f.Kernel.Body = []Stmt{&Prefetch{At: at, Src: Region{Buf: a, Start: ints(64, 0), Extent: []int{64, 64}, Keep: []bool{true, true}}}}
		}, "raw.go:7: prefetch: region of A starts at 64 in dim 0, outside its size 64"},
		{"gemm with no buffer", func(f *Func, a, s *Buffer) {
			f.Kernel.Body = []Stmt{&Gemm{At: at, A: Whole(s), B: Region{}, C: Whole(s)}}
		}, "raw.go:7: gemm: missing buffer"},
		{"store with no buffer", func(f *Func, a, s *Buffer) {
			f.Kernel.Body = []Stmt{&Store{At: at, Idx: ints(0), Value: IntConst(0)}}
		}, "raw.go:7: store: missing buffer"},
		{"reduce with no buffer", func(f *Func, a, s *Buffer) {
			f.Kernel.Body = []Stmt{&Reduce{At: at, Src: s, Dim: 0}}
		}, "raw.go:7: reduce_sum: missing buffer"},
		{"logic on numbers", func(f *Func, a, s *Buffer) {
			f.Kernel.Body = []Stmt{&If{At: at, Cond: &Binary{Op: And, X: IntConst(1), Y: IntConst(0), T: Bool}}}
		}, "raw.go:7: if: && needs bool operands, got i32 and i32"},
		{"float index", func(f *Func, a, s *Buffer) {
			l := buf("l", F32, Local, 4)
			f.Kernel.Allocs = append(f.Kernel.Allocs, l)
			f.Kernel.Body = []Stmt{&Store{At: at, Buf: l, Idx: []Expr{&Const{T: F32, F: 1}}, Value: IntConst(0)}}
		}, "raw.go:7: store: index 0 of l has type f32; want an integer"},
		{"bool stored into a float", func(f *Func, a, s *Buffer) {
			l := buf("l", F32, Local, 4)
			f.Kernel.Allocs = append(f.Kernel.Allocs, l)
			f.Kernel.Body = []Stmt{&Store{At: at, Buf: l, Idx: ints(0), Value: &Const{T: Bool, I: 1}}}
		}, "raw.go:7: store: cannot store a bool into f32 l"},
		{"for with float bounds", func(f *Func, a, s *Buffer) {
			f.Kernel.Body = []Stmt{&For{At: at, Var: i, Start: IntConst(0), Stop: &Const{T: F32, F: 2}, Kind: Unrolled}}
		}, "raw.go:7: unrolled: loop bounds must be integers, got i32 and f32"},
		{"for with no bound", func(f *Func, a, s *Buffer) {
			f.Kernel.Body = []Stmt{&For{At: at, Var: i, Start: IntConst(0), Kind: Serial}}
		}, "raw.go:7: serial: loop bounds must be integers, got i32 and invalid"},
		{"spread loop in a serial loop", func(f *Func, a, s *Buffer) {
			j := &Var{Name: "j", Kind: LoopVar}
			in := &For{At: at, Var: j, Start: IntConst(0), Stop: IntConst(4), Kind: Spread}
			f.Kernel.Body = []Stmt{&For{At: at, Var: i, Start: IntConst(0), Stop: IntConst(2), Kind: Serial, Body: []Stmt{in}}}
		}, "raw.go:7: spread: a spread loop nested in another statement; spread loops are statements of the kernel body"},
		{"spread loop in a spread loop", func(f *Func, a, s *Buffer) {
			j := &Var{Name: "j", Kind: LoopVar}
			in := &For{At: at, Var: j, Start: IntConst(0), Stop: IntConst(4), Kind: Spread}
			f.Kernel.Body = []Stmt{&For{At: at, Var: i, Start: IntConst(0), Stop: IntConst(2), Kind: Spread, Body: []Stmt{in}}}
		}, "raw.go:7: spread: a spread loop inside another spread loop; spread loops are statements of the kernel body"},
		{"parallel vars and extents differ", func(f *Func, a, s *Buffer) {
			f.Kernel.Body = []Stmt{&Parallel{At: at, Vars: []*Var{i}, Extents: []int{4, 4}}}
		}, "raw.go:7: parallel: 1 index variables for 2 extents"},
		{"parallel index used after the loop", func(f *Func, a, s *Buffer) {
			l := buf("l", F32, Local, 4)
			f.Kernel.Allocs = append(f.Kernel.Allocs, l)
			f.Kernel.Body = []Stmt{
				&Parallel{At: at, Vars: []*Var{i}, Extents: []int{4}, Body: []Stmt{&Store{At: at, Buf: l, Idx: []Expr{i}, Value: IntConst(0)}}},
				&Store{At: At{P: Pos{File: "raw.go", Line: 9}}, Buf: l, Idx: []Expr{i}, Value: IntConst(0)},
			}
		}, "raw.go:9: store: variable i is used outside the loop or kernel that binds it"},
		{"skip_ones on a loop that is not a scale", func(f *Func, a, s *Buffer) {
			l := buf("l", F32, Local, 4)
			f.Kernel.Allocs = append(f.Kernel.Allocs, l)
			f.Kernel.Body = []Stmt{&Parallel{At: at, Vars: []*Var{i}, Extents: []int{4}, SkipOnes: true,
				Body: []Stmt{&Store{At: at, Buf: l, Idx: []Expr{i}, Value: &Binary{Op: Add, X: &Load{Buf: l, Idx: []Expr{i}}, Y: IntConst(1), T: F32}}}}}
		}, "raw.go:7: parallel: skip_ones on a loop that is not x[i, ...] = x[i, ...] * f[...]"},
		{"reduce inside parallel", func(f *Func, a, s *Buffer) {
			r := buf("r", F16, Shared, 64)
			f.Kernel.Allocs = append(f.Kernel.Allocs, r)
			f.Kernel.Body = []Stmt{&Parallel{At: at, Vars: []*Var{i}, Extents: []int{4}, Body: []Stmt{
				&Reduce{At: at, Kind: ReduceMax, Src: s, Dst: r, Dim: 1},
			}}}
		}, "raw.go:7: reduce_max: only element stores and if may appear inside a Parallel loop"},
		{"reduce of bools", func(f *Func, a, s *Buffer) {
			s.DType = Bool
			r := buf("r", Bool, Fragment, 64)
			f.Kernel.Allocs = append(f.Kernel.Allocs, r)
			f.Kernel.Body = []Stmt{&Reduce{At: at, Kind: ReduceSum, Src: s, Dst: r, Dim: 0}}
		}, "raw.go:7: reduce_sum: cannot reduce bool values"},
		{"reduce to a scalar", func(f *Func, a, s *Buffer) {
			v := buf("v", F32, Fragment, 64)
			r := buf("r", F32, Local, 2)
			f.Kernel.Allocs = append(f.Kernel.Allocs, v, r)
			f.Kernel.Body = []Stmt{&Reduce{At: at, Kind: ReduceMin, Src: v, Dst: r, Dim: 0}}
		}, "raw.go:7: reduce_min: r has shape [2]; reducing v [64] along dim 0 gives [1]"},
		{"gemm of 1-d tiles", func(f *Func, a, s *Buffer) {
			v := buf("v", F16, Shared, 64)
			c := buf("c", F32, Fragment, 64, 64)
			f.Kernel.Allocs = append(f.Kernel.Allocs, v, c)
			f.Kernel.Body = []Stmt{&Gemm{At: at, A: Whole(v), B: Whole(s), C: Whole(c)}}
		}, "raw.go:7: gemm: operands must be 2-D tiles, got A [64], B [64 64], C [64 64]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, a, s := newFunc()
			tc.edit(f, a, s)
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("Verify panicked: %v", r)
					}
				}()
				err = Verify(f, DefaultLimits)
			}()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Verify = %v; want an error containing %q", err, tc.want)
			}
		})
	}
	t.Run("wait on a column the kernel does not add to", func(t *testing.T) {
		f, _, _ := newFunc()
		c := buf("C", I32, Global, 4, 2)
		c.Pos, c.Output, c.Scratch = pos, true, true
		f.Params = append(f.Params, c)
		col := func(j int64) Region {
			return Region{Buf: c, Start: []Expr{f.Kernel.Idx[0], IntConst(j)}, Extent: []int{1, 1}, Keep: []bool{false, false}}
		}
		sh := buf("t", I32, Shared, 1)
		f.Kernel.Allocs = append(f.Kernel.Allocs, sh)
		f.Kernel.Body = []Stmt{&WaitCount{At: at, Counter: col(0), Min: IntConst(1)}, &Ticket{At: at, Counter: col(1), Dst: Region{Buf: sh, Start: ints(0), Extent: []int{1}, Keep: []bool{false}}}}
		if err := Verify(f, DefaultLimits); err != nil {
			t.Errorf("Verify: %v", err)
		}
	})
	t.Run("cooperative wait on its own counter", func(t *testing.T) {
		f, _, _ := newFunc()
		c := buf("C", I32, Global, 4)
		c.Pos, c.Output, c.Scratch = pos, true, true
		f.Params = append(f.Params, c)
		one := Region{Buf: c, Start: ints(0), Extent: []int{1}, Keep: []bool{false}}
		f.Kernel.Cooperative = true
		f.Kernel.Body = []Stmt{&Signal{At: at, Counter: one}, &WaitCount{At: at, Counter: one, Min: IntConst(1)}}
		if err := Verify(f, DefaultLimits); err != nil {
			t.Errorf("Verify: %v", err)
		}
	})
	t.Run("well formed", func(t *testing.T) {
		f, a, s := newFunc()
		c := buf("c", F32, Fragment, 64, 64)
		f.Kernel.Allocs = append(f.Kernel.Allocs, c)
		bx := f.Kernel.Idx[0]
		f.Kernel.Body = []Stmt{
			&Fill{At: at, Dst: Whole(c), Value: IntConst(0)},
			&For{At: at, Var: i, Start: IntConst(0), Stop: IntConst(4), Kind: Pipelined, Stages: 2, Body: []Stmt{
				&Copy{At: at, Src: Region{Buf: a, Start: []Expr{bx, &Binary{Op: Mul, X: i, Y: IntConst(16), T: I32}}, Extent: []int{64, 64}, Keep: []bool{true, true}}, Dst: Whole(s)},
				&Gemm{At: at, A: Whole(s), B: Whole(s), C: Whole(c), TransB: true},
			}},
		}
		if err := Verify(f, DefaultLimits); err != nil {
			t.Errorf("Verify: %v", err)
		}
		if err := Verify(f, Limits{MaxSharedBytes: 8191, MaxThreads: 1024}); err == nil || !strings.Contains(err.Error(), "shared memory 8192 bytes exceeds the target's 8191") {
			t.Errorf("Verify with 8191 bytes of shared memory = %v", err)
		}
	})
	t.Run("no kernel", func(t *testing.T) {
		err := Verify(&Func{Name: "empty", Pos: pos}, DefaultLimits)
		if err == nil || err.Error() != "raw.go:7: func: empty has no kernel" {
			t.Errorf("Verify = %v", err)
		}
	})
}

func TestErrorText(t *testing.T) {
	l := ErrorList{
		{Op: "copy", Pos: Pos{File: "/a/b/k.go", Line: 3}, Msg: "bad"},
		{Op: "gemm", Msg: "worse"},
	}
	if s := l.Error(); s != "k.go:3: copy: bad\n?: gemm: worse" {
		t.Errorf("Error = %q", s)
	}
	if l.Err() == nil {
		t.Errorf("Err of a non-empty list is nil")
	}
	if (ErrorList{}).Err() != nil {
		t.Errorf("Err of an empty list is not nil")
	}
}

// Parallel.Scale recognizes x[v] = x[v] · f[...] and nothing near it.
func TestParallelScale(t *testing.T) {
	x, f, y := buf("x", F32, Fragment, 4, 8), buf("f", F32, Fragment, 4), buf("y", F32, Fragment, 4, 8)
	i, j := &Var{Name: "i", Kind: LoopVar}, &Var{Name: "j", Kind: LoopVar}
	ld := func(b *Buffer, idx ...Expr) *Load { return &Load{Buf: b, Idx: idx} }
	mul := func(a, b Expr) *Binary { return &Binary{Op: Mul, X: a, Y: b, T: F32} }
	store := func(b *Buffer, v Expr, idx ...Expr) *Store { return &Store{Buf: b, Idx: idx, Value: v} }
	tests := []struct {
		name string
		body []Stmt
		want *Buffer // f's buffer, or nil: not a scale
	}{
		{"x times f", []Stmt{store(x, mul(ld(x, i, j), ld(f, i)), i, j)}, f},
		{"f times x", []Stmt{store(x, mul(ld(f, i), ld(x, i, j)), i, j)}, f},
		{"by a constant", []Stmt{store(x, mul(ld(x, i, j), &Const{T: F32, F: 2}), i, j)}, nil},
		{"by itself", []Stmt{store(x, mul(ld(x, i, j), ld(x, i, j)), i, j)}, nil},
		{"a sum", []Stmt{store(x, &Binary{Op: Add, X: ld(x, i, j), Y: ld(f, i), T: F32}, i, j)}, nil},
		{"into another tile", []Stmt{store(y, mul(ld(x, i, j), ld(f, i)), i, j)}, nil},
		{"transposed read", []Stmt{store(x, mul(ld(x, j, i), ld(f, i)), i, j)}, nil},
		{"two stores", []Stmt{store(x, mul(ld(x, i, j), ld(f, i)), i, j), store(y, ld(x, i, j), i, j)}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &Parallel{Vars: []*Var{i, j}, Extents: []int{4, 8}, Body: tc.body}
			gx, gf, ok := p.Scale()
			if ok != (tc.want != nil) || ok && (gx != x || gf.Buf != tc.want) {
				t.Errorf("Scale() = %v, %v, %v; want f = %v", gx, gf, ok, tc.want)
			}
		})
	}
}
