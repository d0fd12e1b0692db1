package cudagen

import (
	"fmt"
	"strings"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/layout"
)

// copy lowers Copy and AtomicAdd. Fragments move register by register in
// their layout; tiles between global and shared memory move cooperatively,
// 16 bytes per thread per step (cp.async into shared) where the layout
// allows, element by element where it does not.
func (e *emitter) copy(s *ir.Copy, atomic bool) {
	src, dst := s.Src, s.Dst
	switch {
	case atomic && dst.Buf.Scope != ir.Global:
		e.fail(errAt("atomic_add", s.P, "destination must be global"))
	case src.Buf.Scope == ir.Fragment || dst.Buf.Scope == ir.Fragment:
		e.copyFragment(s, atomic)
	case src.Buf.Scope == ir.Local || dst.Buf.Scope == ir.Local:
		if dst.Buf.Scope == ir.Shared {
			e.beforeSharedWrite()
		}
		e.copyElems(s, true, atomic)
		if dst.Buf.Scope == ir.Shared {
			e.sync()
		}
	case e.c.tmaStores[s] != nil:
		e.tmaStore(s, e.c.tmaStores[s])
	default:
		e.syncIfDirty(src.Buf.Scope == ir.Shared)
		if dst.Buf.Scope == ir.Shared {
			e.beforeSharedWrite()
		}
		if !e.copyVector(s, atomic) {
			e.copyElems(s, false, atomic)
		}
		if dst.Buf.Scope == ir.Shared {
			if src.Buf.Scope == ir.Global { // waited for at the first read
				e.line("tl::cp_async_commit();")
				e.pending = true
				e.written()
			} else {
				e.sync()
			}
		} else if src.Buf.Scope == ir.Shared {
			e.read = true
		}
	}
}

// elemAssign writes one element from src to dst, masked at global edges.
func (e *emitter) elemAssign(src, dst ir.Region, sIdx, dIdx []string, atomic bool, srcVal string) {
	if srcVal == "" {
		srcVal = load(src.Buf.DType, e.refStr(src.Buf, sIdx))
		if cond := e.inBounds(src, sIdx); cond != "" {
			srcVal = fmt.Sprintf("(%s ? %s : 0.0f)", cond, srcVal)
		}
	}
	var stmt string
	if atomic {
		if dst.Buf.DType != ir.F32 {
			e.failHere("atomic_add into %s: the CUDA target adds atomically into f32 only", dst.Buf.DType)
		}
		stmt = fmt.Sprintf("atomicAdd(&%s, %s);", e.refStr(dst.Buf, dIdx), srcVal)
	} else {
		stmt = fmt.Sprintf("%s = %s;", e.refStr(dst.Buf, dIdx), e.store(dst.Buf.DType, srcVal))
	}
	if cond := e.inBounds(dst, dIdx); cond != "" {
		stmt = fmt.Sprintf("if (%s) %s", cond, stmt)
	}
	e.line("%s", stmt)
}

// refStr is ref for already-emitted index strings.
func (e *emitter) refStr(b *ir.Buffer, idx []string) string {
	switch b.Scope {
	case ir.Global:
		return fmt.Sprintf("%s[%s]", b.Name, e.globalOffset(b, idx))
	case ir.Shared:
		return e.sharedRef(b, idx)
	}
	return e.ref(b, toExprs(idx))
}

// copyElems copies element by element, spread over the threads (or done
// whole by every thread when a per-thread local is involved).
func (e *emitter) copyElems(s *ir.Copy, perThread, atomic bool) {
	e.tileLoop(s.Src.Shape(), perThread, func(tile []string) {
		e.elemAssign(s.Src, s.Dst, e.bufIndex(s.Src, tile), e.bufIndex(s.Dst, tile), atomic, "")
	})
}

// multipleOf returns a number the value of x is always a multiple of.
func multipleOf(x ir.Expr) int64 {
	switch x := x.(type) {
	case *ir.Const:
		if x.I == 0 {
			return 1 << 30
		}
		if x.I < 0 {
			return -x.I
		}
		return x.I
	case *ir.Binary:
		a, b := multipleOf(x.X), multipleOf(x.Y)
		switch x.Op {
		case ir.Mul:
			return min(a*b, 1<<30)
		case ir.Add, ir.Sub:
			return gcd64(a, b)
		}
	}
	return 1
}

func gcd64(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// vecWidth is how many elements a thread can move with one 16-byte access
// between the two regions, or 0 when their innermost dims do not allow it.
func (e *emitter) vecWidth(src, dst ir.Region) int {
	eb := src.Buf.DType.Bytes()
	if eb != dst.Buf.DType.Bytes() || src.Buf.DType != dst.Buf.DType {
		return 0
	}
	v := 16 / eb
	shape := src.Shape()
	if len(shape) == 0 { // single elements: nothing to vectorize
		return 0
	}
	inner := shape[len(shape)-1]
	for _, r := range []ir.Region{src, dst} {
		n := len(r.Start)
		if !r.Keep[n-1] || inner%v != 0 || multipleOf(r.Start[n-1])%int64(v) != 0 {
			return 0
		}
		if r.Buf.Scope == ir.Global {
			st := r.Buf.Strides
			if st != nil {
				if c, ok := ir.ConstInt(st[n-1]); !ok || c != 1 {
					return 0
				}
				for _, x := range st[:n-1] {
					if multipleOf(x)%int64(v) != 0 {
						return 0
					}
				}
			} else if multipleOf(r.Buf.Shape[n-1])%int64(v) != 0 {
				return 0
			}
		}
	}
	return v
}

// copyVector moves a global/shared tile 16 bytes at a time. It returns
// false when the regions do not allow it.
func (e *emitter) copyVector(s *ir.Copy, atomic bool) bool {
	v := e.vecWidth(s.Src, s.Dst)
	if v == 0 || atomic || s.Src.Buf.Scope == s.Dst.Buf.Scope {
		return false
	}
	if s.Src.Buf.Scope == ir.Global && e.copyTileAsync(s, v) {
		return true
	}
	shape := s.Src.Shape()
	inner := shape[len(shape)-1]
	chunks := 1
	for _, n := range shape {
		chunks *= n
	}
	chunks /= v
	T := e.c.f.Kernel.Threads
	e.open("")
	e.line("#pragma unroll")
	e.open("for (int it = 0; it < %d; ++it)", (chunks+T-1)/T)
	e.line("const int c = tid + it * %d;", T)
	if chunks%T != 0 {
		e.line("if (c >= %d) break;", chunks)
	}
	tile := make([]string, len(shape))
	tile[len(shape)-1] = fmt.Sprintf("(c %% %d) * %d", inner/v, v)
	rest := fmt.Sprintf("(c / %d)", inner/v)
	for d := len(shape) - 2; d >= 0; d-- {
		tile[d] = fmt.Sprintf("(%s %% %d)", rest, shape[d])
		rest = fmt.Sprintf("(%s / %d)", rest, shape[d])
	}
	sIdx, dIdx := e.bufIndex(s.Src, tile), e.bufIndex(s.Dst, tile)
	eb := s.Src.Buf.DType.Bytes()
	if s.Src.Buf.Scope == ir.Global { // global -> shared: cp.async, zero-filled past the edge
		n := len(sIdx)
		var conds []string
		for d := 0; d < n-1; d++ {
			if s.Src.Keep[d] {
				conds = append(conds, fmt.Sprintf("%s < %s", sIdx[d], e.expr(s.Src.Buf.Shape[d])))
			}
		}
		conds = append(conds, fmt.Sprintf("%s < %s", sIdx[n-1], e.expr(s.Src.Buf.Shape[n-1])))
		bytes := fmt.Sprintf("min(%d, (%s - %s) * %d)", 16, e.expr(s.Src.Buf.Shape[n-1]), sIdx[n-1], eb)
		ok := strings.Join(conds, " && ")
		row, col := sharedRowCol(s.Dst.Buf, dIdx)
		e.line("const bool ok = %s;", ok)
		e.line("tl::cp_async16(tl::smem_addr(%s + %s), ok ? (const void*)&%s : (const void*)%s, ok ? %s : 0);",
			e.sharedBase(s.Dst.Buf), e.sharedOffset(s.Dst.Buf, row, col), e.refStr(s.Src.Buf, sIdx), s.Src.Buf.Name, bytes)
	} else { // shared -> global: 16-byte stores where the chunk is inside
		row, col := sharedRowCol(s.Src.Buf, sIdx)
		e.line("const uint4 val = *(const uint4*)(%s + %s);", e.sharedBase(s.Src.Buf), e.sharedOffset(s.Src.Buf, row, col))
		n := len(dIdx)
		full := e.inBounds(s.Dst, dIdx)
		full = strings.Replace(full, dIdx[n-1]+" < ", fmt.Sprintf("%s + %d <= ", dIdx[n-1], v), 1)
		e.line("if (%s) *(uint4*)&%s = val;", orTrue(full), e.refStr(s.Dst.Buf, dIdx))
		e.open("else")
		e.line("const %s* part = (const %s*)&val;", ctype(s.Src.Buf.DType), ctype(s.Src.Buf.DType))
		e.open("for (int j = 0; j < %d; ++j)", v)
		jIdx := append([]string(nil), dIdx...)
		jIdx[n-1] = fmt.Sprintf("(%s + j)", dIdx[n-1])
		e.line("if (%s) %s = part[j];", orTrue(e.inBounds(s.Dst, jIdx)), e.refStr(s.Dst.Buf, jIdx))
		e.close()
		e.close()
	}
	e.close()
	e.close()
	return true
}

func orTrue(s string) string {
	if s == "" {
		return "true"
	}
	return s
}

// copyFragment moves a tile into, out of or between fragments, each thread
// handling the elements its registers hold.
func (e *emitter) copyFragment(s *ir.Copy, atomic bool) {
	src, dst := s.Src, s.Dst
	if src.Buf.Scope == ir.Fragment && dst.Buf.Scope == ir.Fragment {
		ls, ld := e.c.layouts[src.Buf], e.c.layouts[dst.Buf]
		if !ls.Equal(ld) || !src.IsWhole() || !dst.IsWhole() {
			e.fail(errAt("copy", s.P, "fragments %s (%s) and %s (%s) differ in layout; copy through a shared tile", src.Buf.Name, ls, dst.Buf.Name, ld))
			return
		}
		n := ls.NumRegs()
		e.line("#pragma unroll")
		if packed(dst.Buf) && src.Buf.DType == ir.F32 && n%2 == 0 && e.c.opts.Rounding == "rn" {
			// Pairs convert in one instruction, straight into the packed form.
			pack := map[ir.DType]string{ir.BF16: "tl::pack_bf16", ir.F16: "tl::pack_f16"}[dst.Buf.DType]
			e.line("for (int j = 0; j < %d; ++j) %s[j] = %s(%s[2 * j], %s[2 * j + 1]);", n/2, dst.Buf.Name, pack, src.Buf.Name, src.Buf.Name)
			return
		}
		e.line("for (int r = 0; r < %d; ++r) %s", n, fragSet(dst.Buf, "r", e.store(dst.Buf.DType, load(src.Buf.DType, fragGet(src.Buf, "r")))))
		return
	}
	frag, other, out := src, dst, true
	if dst.Buf.Scope == ir.Fragment {
		frag, other, out = dst, src, false
	}
	if !frag.IsWhole() {
		e.fail(errAt("copy", s.P, "copy a whole fragment, not a region of %s", frag.Buf.Name))
		return
	}
	if other.Buf.Scope == ir.Local {
		e.fail(errAt("copy", s.P, "copies between fragments and per-thread locals are not supported"))
		return
	}
	l := e.c.layouts[frag.Buf]
	if other.Buf.Scope == ir.Shared {
		if out {
			e.beforeSharedWrite()
		} else {
			e.syncIfDirty(true)
		}
	}
	half := e.c.halves != nil && e.c.halves.write == s
	if other.Buf.Scope == ir.Global && !atomic && s.Cache == ir.CacheNormal && e.copyVectors(frag, other, l, out) {
		return
	}
	if other.Buf.Scope == ir.Shared && !atomic && !half && e.copyVectors(frag, other, l, out) {
		if out {
			e.wroteShared()
		} else {
			e.read = true
		}
		return
	}
	if out && other.Buf.Scope == ir.Global && e.copyPairsToGlobal(frag, other, l, s.Cache, atomic) {
		return
	}
	if out && other.Buf.Scope == ir.Shared && !atomic && e.copyPairsToShared(frag, other, l) {
		if half {
			e.halfSync(true)
		} else {
			e.wroteShared()
		}
		return
	}
	e.open("")
	names := make([]string, len(l.Shape))
	for i := range names {
		names[i] = e.fresh("c")
	}
	e.fragLoop(l, names)
	oIdx := e.bufIndex(other, names)
	fragVal := load(frag.Buf.DType, fragGet(frag.Buf, "r"))
	if out {
		if rep := firstReplica(l); rep != "" {
			e.line("if (!(%s)) continue;", rep)
		}
		e.elemAssign(frag, other, nil, oIdx, atomic, fragVal)
	} else {
		val := load(other.Buf.DType, e.refStr(other.Buf, oIdx))
		if cond := e.inBounds(other, oIdx); cond != "" {
			val = fmt.Sprintf("(%s ? %s : 0.0f)", cond, val)
		}
		e.line("%s", fragSet(frag.Buf, "r", e.store(frag.Buf.DType, val)))
	}
	e.close()
	e.close()
	if other.Buf.Scope == ir.Shared {
		if out && half {
			e.halfSync(true)
		} else if out {
			e.wroteShared()
		} else {
			e.read = true
		}
	}
}

// copyTileAsync is the fast path of a 2-D global→shared tile copy: each
// thread owns one 16-byte column chunk of a band of cw chunks and every
// (T/cw)-th row of each band, so its global pointer and shared address are
// computed once and each step adds constants (LDGSTS takes them as
// immediates). cw is a row's chunks where the threads divide into them,
// else the widest divisor of them that the threads do and that still spans
// a 128-byte line (MLA's 576-wide tiles: bands of 64 columns). Otherwise
// each step's row and column are divisions of its chunk index, which nvcc
// hoists out of loops as one register per step: in MLA's split kernel,
// spilled and reloaded before every cp.async of each piece's Q.
func (e *emitter) copyTileAsync(s *ir.Copy, v int) bool {
	shape := s.Src.Shape()
	T := e.c.f.Kernel.Threads
	if len(shape) != 2 || !s.Dst.IsWhole() {
		return false
	}
	eb := s.Src.Buf.DType.Bytes()
	rows, cpr := shape[0], shape[1]/v
	cw := cpr
	for cw > 0 && (T%cw != 0 || cpr%cw != 0) {
		cw--
	}
	if cw != cpr && cw*v*eb < 128 {
		return false
	}
	step := T / cw
	sb := e.c.smem.bufs[s.Dst.Buf]
	split := laneSplit{sb: sb,
		rowLane: func(t int) int { return t / cw }, colLane: func(t int) int { return t % cw * v },
		rowC: fmt.Sprintf("tid / %d", cw), colC: fmt.Sprintf("tid %% %d * %d", cw, v)}
	var rcs, ccs []int
	for r := 0; r < rows; r += step {
		rcs = append(rcs, r)
	}
	for c := 0; c < cpr; c += cw {
		ccs = append(ccs, c*v)
	}
	if !split.holds(T, rcs, ccs) {
		return false
	}
	src := s.Src
	dims := src.Dims()
	name := e.fresh("cp")
	e.open("")
	e.line("const int %s_r = tid / %d, %s_c = tid %% %d * %d;", name, cw, name, cw, v)
	idx := e.bufIndex(src, []string{name + "_r", name + "_c"})
	rowDim, colDim := e.expr(src.Buf.Shape[dims[0]]), e.expr(src.Buf.Shape[dims[1]])
	stride := e.strides(src.Buf)[dims[0]]
	e.line("const %s* %s_g = %s + (%s);", ctype(src.Buf.DType), name, src.Buf.Name, e.globalOffset(src.Buf, idx))
	e.line("const int %s_row0 = %s;", name, idx[dims[0]])
	bytes := func(int) string { return "16" }
	// Where the tile starts at column 0 of rows at least as wide, every
	// chunk is whole; else each band's bytes are what is left of the row.
	if w, isConst := atoi(colDim); !isConst || idx[dims[1]] != name+"_c" || w < int64(shape[1]) {
		e.line("const int %s_left = %s - %s;", name, colDim, idx[dims[1]])
		for i, cc := range ccs {
			e.line("const int %s_bytes%s = %s_left <= %d ? 0 : min(16, (%s_left - %d) * %d);", name, suffix(i), name, cc, name, cc, eb)
		}
		bytes = func(i int) string { return name + "_bytes" + suffix(i) }
	}
	e.line("const uint32_t %s_base = tl::smem_addr(%s);", name, e.sharedBase(s.Dst.Buf))
	e.declareSplit(split, name+"_s")
	for i, cc := range ccs {
		for _, rc := range rcs {
			ok := fmt.Sprintf("%s_row0 + %d < %s", name, rc, rowDim)
			g := fmt.Sprintf("%s_g + %d * (long long)(%s) + %d", name, rc, stride, cc)
			if c, isConst := atoi(stride); isConst {
				g = fmt.Sprintf("%s_g + %d", name, int64(rc)*c+int64(cc))
			}
			if rows%step != 0 && rc+step > rows {
				// The last pass is partial: threads past the tile's rows must
				// not copy at all, since even a zero-filling cp.async writes
				// its 16 bytes of shared memory, past the tile.
				e.open("if (%s_r + %d < %d)", name, rc, rows)
			} else {
				e.open("")
			}
			e.line("const bool ok = %s;", ok)
			e.line("tl::cp_async16(%s_base + %s, ok ? (const void*)(%s) : (const void*)%s, ok ? %s : 0);",
				name, split.at(name+"_s", rc, cc), g, src.Buf.Name, bytes(i))
			e.close()
		}
	}
	e.close()
	return true
}

// suffix numbers a band's name: none for the first, so a copy of one
// band reads as before.
func suffix(i int) string {
	if i == 0 {
		return ""
	}
	return fmt.Sprint(i)
}

// pairStore is the C format (address, low, high) of a store of two
// adjacent elements of type dt in one 4-byte (16-bit types) or 8-byte
// (f32) access, if there is one; hinted, the pair goes to global memory
// with the L2 policy pol.
func (e *emitter) pairStore(l *layout.Fragment, dt ir.DType, hinted bool) (string, bool) {
	last := len(l.Shape) - 1
	if len(l.Reg) == 0 || l.Reg[0] != (layout.Digit{Size: 2, Dim: last, Stride: 1}) {
		return "", false
	}
	switch {
	case (dt == ir.BF16 || dt == ir.F16) && e.c.opts.Rounding == "rn":
		pack := packFunc(dt)
		if hinted {
			return "tl::st_global_b32_hint(%s, " + pack + "(%s, %s), pol);", true
		}
		return "*(uint32_t*)(%s) = " + pack + "(%s, %s);", true
	case dt == ir.F32:
		if hinted {
			return "tl::st_global_f32x2_hint(%s, %s, %s, pol);", true
		}
		return "*(float2*)(%s) = make_float2(%s, %s);", true
	}
	return "", false
}

// packFunc is the device function that rounds two f32 to a 16-bit pair
// in one 32-bit word.
func packFunc(dt ir.DType) string {
	return map[ir.DType]string{ir.BF16: "tl::pack_bf16", ir.F16: "tl::pack_f16"}[dt]
}

// copyPairsToGlobal stores a fragment into a global region two elements
// at a time, as copyPairsToShared does, where every pair is whole and
// aligned: the region's rows are contiguous, start at an even column and
// lie an even number of elements apart, and the tensor's rows have an
// even length, so a pair's second element is in bounds when its first is
// (kernel parameters are whole allocations, 256-byte aligned).
//
// A cache hint (sm_90a) goes on each store as an L2 policy made once.
func (e *emitter) copyPairsToGlobal(frag, dst ir.Region, l *layout.Fragment, hint ir.CacheHint, atomic bool) bool {
	hinted := hint != ir.CacheNormal && e.c.opts.Arch == "sm_90a" && !atomic
	store, ok := e.pairStore(l, dst.Buf.DType, hinted)
	if atomic {
		// One vector reduction a pair on sm_90 (two atomics before it), its
		// address from one pointer: per element, the backward's dQ spent a
		// third of its warps' time on atomics' addresses and branches.
		store, ok = "tl::red_add_f32x2(%s, %s, %s);", ok && dst.Buf.DType == ir.F32
	}
	n := len(dst.Start)
	if !ok || !dst.Keep[n-1] || multipleOf(dst.Start[n-1])%2 != 0 || multipleOf(dst.Buf.Shape[n-1])%2 != 0 {
		return false
	}
	if dst.Buf.Strides != nil {
		for d, st := range dst.Buf.Strides {
			if c, ok := ir.ConstInt(st); d == n-1 && (!ok || c != 1) || d < n-1 && multipleOf(st)%2 != 0 {
				return false
			}
		}
	}
	if hinted {
		e.open("")
		e.line("const uint64_t pol = tl::l2_%s();", hint)
		defer e.close()
	}
	if !atomic && e.storeQuadsFrom(frag, dst, l, hinted) || e.storePairsFrom(frag, dst, l, store) {
		return true
	}
	e.storePairs(frag, l, store, nil, func(names []string) (string, string) {
		idx := e.bufIndex(dst, names)
		return "&" + e.refStr(dst.Buf, idx), e.inBounds(dst, idx)
	})
	return true
}

// storePairsFrom is storePairs into global memory from one pointer a
// thread computes once, where the region's strides are constants: each
// pair's address is that pointer plus a constant of the unrolled loop.
// Writing each pair's whole index instead, nvcc recomputed a 64-bit
// address (about 20 instructions) and branched around every store (MLA's
// split kernel: 64 stores a thread and piece). Bounds that hold for the
// whole tile (a constant start, the tile inside the tensor) are not
// tested.
func (e *emitter) storePairsFrom(frag, dst ir.Region, l *layout.Fragment, store string) bool {
	dims := dst.Dims()
	strides := e.strides(dst.Buf)
	for _, d := range dims {
		if _, ok := atoi(strides[d]); !ok {
			return false
		}
	}
	gp := e.fresh("gp")
	pointer := func(bases []string) {
		e.line("%s* const %s = &%s;", ctype(dst.Buf.DType), gp, e.refStr(dst.Buf, e.bufIndex(dst, bases)))
	}
	e.storePairs(frag, l, store, pointer, func(names []string) (string, string) {
		return e.fromPointer(dst, l, gp, names)
	})
	return true
}

// fromPointer is the address of register r's element in dst, as pointer
// gp (a thread's element of register 0) plus constants of the unrolled
// loop, and the bounds it must be tested against: none on a dim where the
// whole tile lies inside the tensor.
func (e *emitter) fromPointer(dst ir.Region, l *layout.Fragment, gp string, names []string) (addr, cond string) {
	dims, shape := dst.Dims(), dst.Shape()
	strides := e.strides(dst.Buf)
	idx := e.bufIndex(dst, names)
	addr = gp
	var conds []string
	for i, d := range dims {
		if reg := digitsExpr(l.Reg, i, "r"); reg != "0" {
			addr += fmt.Sprintf(" + (%s) * %s", reg, strides[d])
		}
		start, ok1 := ir.ConstInt(dst.Start[d])
		size, ok2 := ir.ConstInt(dst.Buf.Shape[d])
		if !ok1 || !ok2 || start+int64(shape[i]) > size {
			conds = append(conds, fmt.Sprintf("%s < %s", idx[d], e.expr(dst.Buf.Shape[d])))
		}
	}
	return addr, strings.Join(conds, " && ")
}

// storePairs emits the loop over a fragment's register pairs, each stored
// by store (pairStore's format) at the address at gives for the pair's
// coordinates, under the condition it gives ("" for none). setup, if not
// nil, runs before the loop with the names of the coordinates' thread
// parts.
func (e *emitter) storePairs(frag ir.Region, l *layout.Fragment, store string, setup func(bases []string), at func(names []string) (addr, cond string)) {
	names := e.openStoreLoop(l, setup)
	e.line("if (r %% 2) continue;")
	if rep := firstReplica(l); rep != "" {
		e.line("if (!(%s)) continue;", rep)
	}
	addr, cond := at(names)
	st := fmt.Sprintf(store, addr, load(frag.Buf.DType, fragGet(frag.Buf, "r")), load(frag.Buf.DType, fragGet(frag.Buf, "r + 1")))
	if cond != "" {
		st = fmt.Sprintf("if (%s) %s", cond, st)
	}
	e.line("%s", st)
	e.close()
	e.close()
}

// openStoreLoop opens a scope and the loop over a fragment's registers
// (fragLoop), running setup, if not nil, with the names of the
// coordinates' thread parts before the loop; it returns the coordinates'
// names. The caller closes both.
func (e *emitter) openStoreLoop(l *layout.Fragment, setup func(bases []string)) []string {
	return e.openStoreLoopStep(l, setup, 1)
}

// openStoreLoopStep is openStoreLoop over every step-th register.
func (e *emitter) openStoreLoopStep(l *layout.Fragment, setup func(bases []string), step int) []string {
	e.open("")
	names := make([]string, len(l.Shape))
	for i := range names {
		names[i] = e.fresh("c")
	}
	bases := e.fragBases(l)
	if setup != nil {
		setup(bases)
	}
	e.fragLoopStep(l, bases, names, step)
	return names
}

// copyPairsToShared stores a fragment into a shared tile two elements at a
// time when each thread's registers come in pairs of adjacent columns (as
// accumulators do): one 4-byte (16-bit types) or 8-byte (f32) store each.
func (e *emitter) copyPairsToShared(frag, dst ir.Region, l *layout.Fragment) bool {
	store, ok := e.pairStore(l, dst.Buf.DType, false)
	if !ok || !dst.IsWhole() {
		return false
	}
	e.storePairs(frag, l, store, nil, func(names []string) (string, string) {
		row, col := sharedRowCol(dst.Buf, names)
		return fmt.Sprintf("%s + %s", e.sharedBase(dst.Buf), e.sharedOffset(dst.Buf, row, col)), ""
	})
	return true
}

// prefetch spreads a global tile's 128-byte lines over the threads, each
// fetching its lines into L2; a line holds 128 bytes of the innermost dim
// when that dim is contiguous, one element otherwise.
func (e *emitter) prefetch(s *ir.Prefetch) {
	src := s.Src
	lines := src.Shape() // the tile in lines: the innermost dim cut in 128 bytes when contiguous
	step := 1
	if dims := src.Dims(); len(dims) > 0 && e.strides(src.Buf)[dims[len(dims)-1]] == "1" {
		step = max(1, 128/src.Buf.DType.Bytes())
		lines[len(lines)-1] = (lines[len(lines)-1] + step - 1) / step
	}
	n := 1
	for _, d := range lines {
		n *= d
	}
	name := e.fresh("pf")
	e.open("for (int %s = tid; %s < %d; %s += %d)", name, name, n, name, e.c.f.Kernel.Threads)
	tile := make([]string, len(lines))
	rest := name
	for d := len(lines) - 1; d >= 0; d-- {
		tile[d] = fmt.Sprintf("(%s %% %d)", rest, lines[d])
		if d == len(lines)-1 && step > 1 {
			tile[d] = fmt.Sprintf("(%s %% %d * %d)", rest, lines[d], step)
		}
		rest = fmt.Sprintf("(%s / %d)", rest, lines[d])
	}
	idx := e.bufIndex(src, tile)
	ref := fmt.Sprintf("&%s", e.refStr(src.Buf, idx))
	if cond := e.inBounds(src, idx); cond != "" {
		e.line("if (%s) tl::prefetch_l2(%s);", cond, ref)
	} else {
		e.line("tl::prefetch_l2(%s);", ref)
	}
	e.close()
}
