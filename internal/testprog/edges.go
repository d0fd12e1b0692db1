package testprog

import "github.com/tilego/tilego/tl"

// Edges are small programs at the edges of what the CUDA emitter once
// lowered: single elements, 0-d tiles, reductions of fragments
// no loop or Gemm lays out. Each writes every element of its outputs; the
// GPU test (backend/cuda, gpu_edges_test.go) checks them against the interpreter.
var Edges = map[string]func() *tl.Func{
	// vecWidth indexed the innermost dim of single elements.
	"single_elements": func() *tl.Func {
		f := tl.NewFunc("single_elements")
		X, Y := f.In("X", tl.F16, 64, 64), f.Out("Y", tl.F16, 2)
		f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
			s := k.Shared(tl.F16, 8, 8)
			k.Copy(X.Sub(3, 5), s.Sub(1, 2))
			k.Copy(X.Sub(60, 63), s.Sub(7, 7))
			k.Copy(s.Sub(1, 2), Y.Sub(0))
			k.Copy(s.Sub(7, 7), Y.Sub(1))
		})
		return f
	},
	"scalar_fragment_and_local": func() *tl.Func {
		f := tl.NewFunc("scalars")
		X, Y := f.In("X", tl.F32, 4), f.Out("Y", tl.F32, 2)
		f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
			fr, l := k.Fragment(tl.F32), k.Local(tl.F32)
			k.Copy(X.Sub(1), fr)
			k.Copy(X.Sub(2), l)
			k.Copy(fr, Y.Sub(0))
			k.Copy(l, Y.Sub(1))
		})
		return f
	},
	// A pipelined loop inside a serial one reads tiles from a row offset
	// the kernel sets once before both (a packed sequence's start): the
	// loop loads ahead through it.
	"offset_before_serial_loop": func() *tl.Func { return OffsetBeforeSerialLoop(false) },
	// Source and result took a spread each, which did not match.
	"reduce_rows": func() *tl.Func {
		f := tl.NewFunc("reduce_rows")
		X, Y := f.In("X", tl.F32, 64, 64), f.Out("Y", tl.F32, 64)
		f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
			fr, o := k.Fragment(tl.F32, 64, 64), k.Fragment(tl.F32, 64)
			k.Copy(X, fr)
			k.ReduceSum(fr, o, 1)
			k.Copy(o, Y)
		})
		return f
	},
	"reduce_cols": func() *tl.Func {
		f := tl.NewFunc("reduce_cols")
		X, Y := f.In("X", tl.F32, 64, 64), f.Out("Y", tl.F32, 64)
		f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
			fr, o := k.Fragment(tl.F32, 64, 64), k.Fragment(tl.F32, 64)
			k.Copy(X, fr)
			k.ReduceMax(fr, o, 0)
			k.Copy(o, Y)
		})
		return f
	},
	"reduce_middle_of_3": func() *tl.Func {
		f := tl.NewFunc("reduce_middle")
		X, Y := f.In("X", tl.F32, 4, 8, 16), f.Out("Y", tl.F32, 4, 16)
		f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
			fr, o := k.Fragment(tl.F32, 4, 8, 16), k.Fragment(tl.F32, 4, 16)
			k.Copy(X, fr)
			k.ReduceSum(fr, o, 1)
			k.Copy(o, Y)
		})
		return f
	},
	// Found by tilego fuzz on an H200. A TMA store moved a bf16 tile's bits
	// into an f16 tensor (and f16 into bf16): a bulk copy does not convert.
	"tma_store_other_type": func() *tl.Func {
		f := tl.NewFunc("tma_store_other_type")
		X, Y := f.In("X", tl.F8E4M3, 16, 128), f.Out("Y", tl.F16, 16, 128)
		W, Z := f.In("W", tl.F32, 32, 64), f.Out("Z", tl.BF16, 32, 64)
		f.Kernel(tl.Grid(1), 32, func(k *tl.Block) {
			s, h := k.Shared(tl.BF16, 16, 128), k.Shared(tl.F16, 32, 64)
			fr := k.Fragment(tl.F32, 32, 64)
			k.Copy(X, s)
			k.Copy(s, Y)
			k.Copy(W, fr)
			k.Copy(fr, h)
			k.Copy(h, Z)
		})
		return f
	},
	// The negation of a negative constant was emitted "--3.0f", a decrement.
	"negated_negative_constant": func() *tl.Func {
		f := tl.NewFunc("negated_negative_constant")
		Y := f.Out("Y", tl.F16, 64, 64)
		f.Kernel(tl.Grid(1), 32, func(k *tl.Block) {
			fr := k.Fragment(tl.F16, 64, 64)
			k.Parallel(func(i, j tl.Expr) { fr.Set(tl.Float(-3).Neg(), i, j) }, 64, 64)
			k.Copy(fr, Y)
		})
		return f
	},
	// i32 products past 2^31: C leaves them undefined (NVRTC folded them
	// to other values than the interpreter's wrap).
	"i32_overflow": func() *tl.Func {
		f := tl.NewFunc("i32_overflow")
		Y := f.Out("Y", tl.I32, 64, 16)
		f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
			bx, _, _ := k.Idx()
			fr := k.Fragment(tl.I32, 64, 16)
			k.Parallel(func(i, j tl.Expr) {
				fr.Set(bx.Add(i.Mul(536870912)).Add(j.Mul(1073741824)).Mod(1000003), i, j)
			}, 64, 16)
			k.Copy(fr, Y)
		})
		return f
	},
	// f8 stores saturate on the GPU (cvt.rn.satfinite): the interpreter
	// made e4m3 infinities NaN and kept e5m2's.
	"f8_saturates": func() *tl.Func {
		f := tl.NewFunc("f8_saturates")
		X, Y, Z := f.In("X", tl.F32, 32, 64), f.Out("Y", tl.F8E4M3, 32, 64), f.Out("Z", tl.F8E5M2, 32, 64)
		f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
			fr := k.Fragment(tl.F32, 32, 64)
			k.Copy(X, fr)
			k.Parallel(func(i, j tl.Expr) {
				fr.Set(tl.Select(i.Lt(8), fr.At(i, j).Mul(1e6), tl.Select(i.Lt(16), tl.NegInf(), fr.At(i, j))), i, j)
			}, 32, 64)
			k.Copy(fr, Y)
			k.Copy(fr, Z)
		})
		return f
	},
	// A tile loaded and never read shared its bytes with a later tile, and
	// its copy, which nothing waits for, landed over the later one's.
	"dead_async_load": func() *tl.Func {
		f := tl.NewFunc("dead_async_load")
		X, Y := f.In("X", tl.BF16, 192, 32), f.Out("Y", tl.BF16, 192, 32)
		f.Kernel(tl.Grid(3), 32, func(k *tl.Block) {
			bx, _, _ := k.Idx()
			dead, s := k.Shared(tl.BF16, 16), k.Shared(tl.BF16, 64, 16)
			k.Copy(X.Sub(0, tl.Range(0, 16)), dead)
			k.Pipelined(2, 2, func(i tl.Expr) {
				k.Copy(X.Sub(tl.Tile(bx, 64), tl.Tile(i, 16)), s)
				k.Copy(s, Y.Sub(tl.Tile(bx, 64), tl.Tile(i, 16)))
			})
		})
		return f
	},
	// A Gemm with B transposed, both operands the second 128-byte panel of
	// their tiles: B's descriptor took its first column (K's) for N's too,
	// and wgmma read past the tile.
	"gemm_transb_second_panel": func() *tl.Func {
		f := tl.NewFunc("gemm_transb_second_panel")
		A, B, C := f.In("A", tl.BF16, 64, 128), f.In("B", tl.BF16, 16, 128), f.Out("C", tl.F32, 64, 16)
		f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
			as, bs := k.Shared(tl.BF16, 64, 128), k.Shared(tl.BF16, 16, 128)
			acc := k.Fragment(tl.F32, 64, 16)
			k.Copy(A, as)
			k.Copy(B, bs)
			k.Gemm(as.Sub(tl.All, tl.Range(64, 64)), bs.Sub(tl.All, tl.Range(64, 64)), acc, tl.TransB, tl.ClearAccum, tl.WithPolicy(tl.FullRow))
			k.Copy(acc, C)
		})
		return f
	},
	// A fragment of 32 elements over 128 threads holds each in four: all
	// four rewrote a shared element, and a late one read the new value.
	"replicated_shared_update": func() *tl.Func {
		f := tl.NewFunc("replicated_shared_update")
		X, Y := f.In("X", tl.F32, 4, 8), f.Out("Y", tl.F32, 4, 8)
		f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
			fr, s := k.Fragment(tl.F32, 4, 8), k.Shared(tl.F32, 4, 8)
			k.Copy(X, fr)
			k.Copy(X, s)
			k.Parallel(func(i, j tl.Expr) { s.Set(s.At(i, j).Mul(2).Add(fr.At(i, j)), i, j) }, 4, 8)
			k.Copy(s, Y)
		})
		return f
	},
	// A Deferred Gemm read a tile that the iteration before loaded by
	// cp.async after its prefetch: the newest group, which the loop's wait
	// for its slot left in flight (asyncTail).
	"deferred_reads_body_load": func() *tl.Func {
		f := tl.NewFunc("deferred_reads_body_load")
		A, B, C := f.In("A", tl.BF16, 64, 96), f.In("B", tl.BF16, 96, 32), f.Out("C", tl.F32, 64, 32)
		f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
			as, bs := k.Shared(tl.BF16, 64, 32), k.Shared(tl.BF16, 32, 64)
			acc := k.Fragment(tl.F32, 64, 32)
			k.Clear(acc)
			k.Pipelined(3, 3, func(i tl.Expr) {
				k.Defer(func() { k.Gemm(as, bs.Sub(tl.All, tl.Range(0, 32)), acc, tl.WithPolicy(tl.FullRow)) })
				k.Copy(A.Sub(tl.All, tl.Tile(i, 32)), as)
				k.Copy(B.Sub(tl.Tile(i, 32), tl.All), bs.Sub(tl.All, tl.Range(0, 32)))
			})
			k.Copy(acc, C)
		})
		return f
	},
	// A tile a pipelined loop loads, read after the loop: refused as a
	// "multi-buffered tile used outside its pipelined loop" until such a
	// tile kept one buffer (hoistable's usedOutside).
	"ring_tile_used_after_loop": func() *tl.Func {
		f := tl.NewFunc("ring_tile_used_after_loop")
		X, Y := f.In("X", tl.BF16, 64, 192), f.Out("Y", tl.BF16, 64, 64)
		f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
			s := k.Shared(tl.BF16, 64, 64)
			acc := k.Fragment(tl.F32, 64, 64)
			k.Clear(acc)
			k.Pipelined(3, 2, func(i tl.Expr) {
				k.Copy(X.Sub(tl.All, tl.Tile(i, 64)), s)
				k.Parallel(func(r, c tl.Expr) { acc.Set(acc.At(r, c).Add(s.At(r, c)), r, c) }, 64, 64)
			})
			k.Copy(s, Y) // the last tile the loop loaded
		})
		return f
	},
	// Two independent GEMMs a pipelined iteration, each waited for on
	// wgmma where it is used (cudagen's lazyStmts); then with a producer.
	"gemms_waited_where_used":    func() *tl.Func { return gemmsWaitedWhereUsed(false) },
	"gemms_waited_where_used_ws": func() *tl.Func { return gemmsWaitedWhereUsed(true) },
	// A pipelined loop loads an f32 row beside a bf16 tile (both by TMA on
	// Hopper), the last tile past the tensor's end; the body writes a
	// shared row that the next iteration reads first.
	"row_beside_tile":    func() *tl.Func { return RowBesideTile(false) },
	"row_beside_tile_ws": func() *tl.Func { return RowBesideTile(true) },
	// Tensors named as the generated code's own names and C++ words
	// (compiler/cudagen/names.go renames them).
	"clashing_names": func() *tl.Func {
		const rows, cols = 64, 96
		f := tl.NewFunc("clashing_names")
		in, bias, out := f.In("lane", tl.F32, rows, cols), f.In("int", tl.F32, cols), f.Out("val", tl.F32, rows)
		f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
			tid := k.Fragment(tl.F32, rows, cols).Named("tid")
			smem := k.Shared(tl.F32, cols).Named("smem")
			ok := k.Fragment(tl.F32, rows).Named("ok")
			c3 := k.Fragment(tl.F32, rows).Named("c3")
			k.Copy(in, tid)
			k.Copy(bias, smem)
			k.Parallel(func(r, c tl.Expr) { tid.Set(tid.At(r, c).Mul(2).Add(smem.At(c)), r, c) }, rows, cols)
			k.ReduceSum(tid, ok, 1)
			k.Parallel(func(r tl.Expr) { c3.Set(ok.At(r).Add(1), r) }, rows)
			k.Copy(c3, out)
		})
		return f
	},
}

// gemmsWaitedWhereUsed is two independent GEMMs a pipelined iteration, the
// first's result used before the second's (with ws, a producer warpgroup
// loads the tiles, whose slot the consumers free only once both are done).
func gemmsWaitedWhereUsed(ws bool) *tl.Func {
	f := tl.NewFunc(wsName("gemms_waited_where_used", ws))
	A, B := f.In("A", tl.BF16, 64, 256), f.In("B", tl.BF16, 64, 256)
	C, D := f.Out("C", tl.F32, 64, 64), f.Out("D", tl.F32, 64, 64)
	f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
		if ws {
			k.WarpSpecialize()
		}
		as, bs := k.Shared(tl.BF16, 64, 64), k.Shared(tl.BF16, 64, 64)
		c, d := k.Fragment(tl.F32, 64, 64), k.Fragment(tl.F32, 64, 64)
		sum, prod := k.Fragment(tl.F32, 64, 64), k.Fragment(tl.F32, 64, 64)
		k.Clear(sum)
		k.Clear(prod)
		k.Pipelined(4, 2, func(i tl.Expr) {
			k.Copy(A.Sub(tl.All, tl.Tile(i, 64)), as)
			k.Copy(B.Sub(tl.All, tl.Tile(i, 64)), bs)
			k.Gemm(as, bs, c, tl.TransB, tl.ClearAccum) // A·Bᵀ
			k.Gemm(bs, as, d, tl.TransB, tl.ClearAccum) // B·Aᵀ
			k.Parallel(func(r, q tl.Expr) { sum.Set(sum.At(r, q).Add(c.At(r, q)), r, q) }, 64, 64)
			k.Parallel(func(r, q tl.Expr) { prod.Set(prod.At(r, q).Add(d.At(r, q).Mul(0.5)), r, q) }, 64, 64)
		})
		k.Copy(sum, C)
		k.Copy(prod, D)
	})
	return f
}

// OffsetBeforeSerialLoop reads tiles of A from a row offset the kernel
// sets once from an input (a packed sequence's start), in a pipelined
// loop inside a serial one, and stores them to O; ws gives it a producer
// warpgroup.
func OffsetBeforeSerialLoop(ws bool) *tl.Func {
	f := tl.NewFunc("offset_before_serial_loop")
	off := f.In("Off", tl.I32, 2)
	A := f.In("A", tl.BF16, 512, 64)
	O := f.Out("O", tl.BF16, 2, 2, 256, 64)
	f.Kernel(tl.Grid(2), 128, func(k *tl.Block) {
		b, _, _ := k.Idx()
		if ws {
			k.WarpSpecialize()
		}
		start := k.Let(tl.Max(off.At(b), 0).Add(b.Mul(37).Add(5)))
		s := k.Shared(tl.BF16, 64, 64)
		k.Serial(2, func(g tl.Expr) {
			k.Pipelined(4, 2, func(j tl.Expr) {
				k.Copy(A.Sub(tl.Range(start.Add(j.Mul(64)).Add(g), 64), tl.All), s)
				k.Copy(s, O.Sub(b, g, tl.Tile(j, 64), tl.All))
			})
		})
	})
	return f
}

// RowBesideTile loads, each iteration of a pipelined loop, a 64×64 bf16
// tile of A and the 64 f32 values of L for its rows (200 rows: the last
// tile reaches past the end), and accumulates A's rows scaled by L plus
// a shared row the previous iteration wrote (0 for the first); ws gives
// it a producer warpgroup.
func RowBesideTile(ws bool) *tl.Func {
	f := tl.NewFunc(wsName("row_beside_tile", ws))
	A, L := f.In("A", tl.BF16, 2, 200, 64), f.In("L", tl.F32, 2, 200)
	O := f.Out("O", tl.F32, 2, 64, 64)
	f.Kernel(tl.Grid(2), 128, func(k *tl.Block) {
		b, _, _ := k.Idx()
		if ws {
			k.WarpSpecialize()
		}
		as, ls, prev := k.Shared(tl.BF16, 64, 64), k.Shared(tl.F32, 64), k.Shared(tl.F32, 64)
		acc := k.Fragment(tl.F32, 64, 64)
		k.Clear(acc)
		k.Parallel(func(r tl.Expr) { prev.Set(0, r) }, 64)
		k.Pipelined(4, 2, func(i tl.Expr) {
			k.Copy(A.Sub(b, tl.Tile(i, 64), tl.All), as)
			k.Copy(L.Sub(b, tl.Tile(i, 64)), ls)
			k.Parallel(func(r, d tl.Expr) {
				acc.Set(acc.At(r, d).Add(as.At(r, d).Mul(ls.At(r))).Add(prev.At(r)), r, d)
			}, 64, 64)
			k.Parallel(func(r tl.Expr) { prev.Set(ls.At(r).Mul(0.5).Add(i), r) }, 64)
		})
		k.Copy(acc, O.Sub(b, tl.All, tl.All))
	})
	return f
}

// SharedTileAdds has four blocks each add a 64×64 f32 tile, made in
// registers and handed through shared memory, into overlapping rows of Y
// (100 rows: the last block's tile reaches past the end).
func SharedTileAdds() *tl.Func {
	f := tl.NewFunc("shared_tile_adds")
	X, Y := f.In("X", tl.F32, 4, 64, 64), f.Out("Y", tl.F32, 100, 64)
	f.Kernel(tl.Grid(4), 128, func(k *tl.Block) {
		b, _, _ := k.Idx()
		x, s := k.Fragment(tl.F32, 64, 64), k.Shared(tl.F32, 64, 64)
		k.Copy(X.Sub(b, tl.All, tl.All), x)
		k.Parallel(func(i, j tl.Expr) { x.Set(x.At(i, j).Mul(2).Add(b), i, j) }, 64, 64)
		k.Copy(x, s)
		k.AtomicAdd(s, Y.Sub(tl.Range(b.Mul(16), 64), tl.All))
	})
	return f
}

// wsName is name, with "_ws" for the variant with a producer warpgroup.
func wsName(name string, ws bool) string {
	if ws {
		return name + "_ws"
	}
	return name
}
