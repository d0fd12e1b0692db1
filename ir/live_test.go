package ir

import "testing"

// Two tiles used one after the other share bytes; a tile used in a loop is
// live through the whole loop, so one used after the loop cannot share with
// one used before it if both are also used inside.
func TestPeakSharedBytes(t *testing.T) {
	tile := func(name string, n int) *Buffer {
		return &Buffer{Name: name, DType: F32, Scope: Shared, Shape: []Expr{IntConst(int64(n))}}
	}
	a, b, c := tile("a", 1024), tile("b", 1024), tile("c", 256)
	fill := func(x *Buffer) Stmt { return &Fill{Dst: Whole(x), Value: &Const{T: F32}} }
	loopVar := &Var{Name: "i"}
	copyAB := &Copy{Src: Whole(a), Dst: Whole(b)} // reads a first: a is carried
	copyAC := &Copy{Src: Region{Buf: a, Start: []Expr{IntConst(0)}, Extent: []int{256}, Keep: []bool{true}}, Dst: Whole(c)}
	cases := []struct {
		name string
		body []Stmt
		want int
	}{
		{"sequential", []Stmt{fill(a), fill(b), fill(c)}, 4096},
		{"overlapping", []Stmt{fill(a), fill(b), fill(a), fill(c)}, 8192},
		{"loop keeps a carried tile live", []Stmt{&For{Var: loopVar, Start: IntConst(0), Stop: IntConst(2), Body: []Stmt{copyAB, fill(a)}}, fill(c)}, 8192},
		{"tiles rewritten first each iteration share", []Stmt{&For{Var: loopVar, Start: IntConst(0), Stop: IntConst(2), Body: []Stmt{fill(a), copyAC, fill(b)}}}, 4096 + 1024},
		{"a tile first written under an if is carried", []Stmt{&For{Var: loopVar, Start: IntConst(0), Stop: IntConst(2), Body: []Stmt{&If{Cond: &Const{T: Bool}, Then: []Stmt{fill(a)}}, copyAC, fill(b)}}}, 8192},
		{"a pipelined loop's tiles span it", []Stmt{&For{Var: loopVar, Start: IntConst(0), Stop: IntConst(2), Kind: Pipelined, Stages: 2, Body: []Stmt{fill(a), fill(b)}}}, 8192 + 1024},
		{"deferred use spans its loop", []Stmt{&For{Var: loopVar, Start: IntConst(0), Stop: IntConst(2), Kind: Pipelined, Stages: 2, Body: []Stmt{fill(a), &Deferred{Body: []Stmt{fill(b)}}}}, fill(c)}, 8192},
		{"unused tile counts throughout", []Stmt{fill(b)}, 4096 + 4096 + 1024},
	}
	for _, tc := range cases {
		k := &Kernel{Allocs: []*Buffer{a, b, c}, Body: tc.body}
		if got := k.PeakSharedBytes(); got != tc.want {
			t.Errorf("%s: peak %d, want %d", tc.name, got, tc.want)
		}
	}
}
