package fuzz

import (
	"fmt"
	"math/rand/v2"

	"github.com/tilego/tilego/ir"
)

// gen draws one program. Its rules keep the program valid and its meaning
// the same on every backend: each output is written by one op at a region
// only its block owns; every on-chip tile is initialized at the top before
// it is read; fragments come in families that share one layout (a Parallel
// loop or a reduction touches one family); a Pipelined loop's ring tiles
// live inside it.
type gen struct {
	r *rand.Rand
	// extra draws what was added to the generator after its corpus of
	// seeds was chosen (tests pick seeds that reach a feature), so that a
	// seed's other draws stay as they were.
	extra *rand.Rand
	// names draws which buffers take a name the generated code uses
	// itself (clashNames), on a stream of its own for the same reason.
	names *rand.Rand
	// rows draws a pipelined loop's ring row (body), on a stream of its own
	// so that the programs of seeds without one stay as they were.
	rows *rand.Rand
	used map[string]bool // the names given so far
	sw   Switches
	p    *Prog

	frag2, rowF, colF, oneF map[int][]int // fragments by family: [BM,BN], [BM], [BN], [1]
	sh2, shRow, shCol, loc  []int         // shared [BM,BN], [BM], [BN]; locals [BN]
	ring                    []int         // shared [BM,BN] tiles of the column loop's ring (when it is pipelined)
	ringCol                 []int         // shared [BN] rows of that ring, loaded from a [cols] input
	xs                      []int         // row-indexed inputs
	inCol                   []int         // global inputs [BN], read by column in Parallel loops
	i32                     []int         // i32 tiles [BM,BN] (index arithmetic)
	nfam                    int
	gemm                    *gemmParts
	inRing                  bool // generating the body of the pipelined column loop
	wide                    int  // a shared tile of the block's rows and every column tile, or -1
	scalar                  int  // a shared tile with no dims (Switches.SharedNoDims), or -1
	wg                      *roles
}

// Generate draws the program of seed.
func Generate(seed uint64, sw Switches) *Prog {
	g := &gen{r: rand.New(rand.NewPCG(seed, 0x7f4a7c15)), extra: rand.New(rand.NewPCG(seed, 0x2545f491)),
		names: rand.New(rand.NewPCG(seed, 0x5851f42d)), rows: rand.New(rand.NewPCG(seed, 0x3c6ef372)),
		used: map[string]bool{}, sw: sw, wide: -1, scalar: -1,
		frag2: map[int][]int{}, rowF: map[int][]int{}, colF: map[int][]int{}, oneF: map[int][]int{}}
	p := &Prog{Seed: seed}
	g.p = p
	withGemm := g.r.IntN(3) == 0
	g.shape(withGemm)
	g.tiles()
	g.roleTiles()
	if withGemm {
		g.gemm = g.gemmTiles()
	}
	g.body()
	// On a stream of their own, so that the rest of a seed's program
	// stays as it was drawn before them.
	outer := rand.New(rand.NewPCG(seed, 0x1b873593))
	if p.Spread == 0 && !p.UnboundSym {
		p.RowVar = outer.IntN(3) == 0
		if outer.IntN(3) == 0 {
			p.Repeat = 2
		}
	}
	return p
}

func (g *gen) pick(xs ...int) int { return xs[g.r.IntN(len(xs))] }
func (g *gen) coin(n int) bool    { return g.r.IntN(n) == 0 }

// shape draws the threads, the block tile and the tensor sizes: at most a
// few thousand elements a tensor, 1 to 4 blocks, partial tiles at edges.
func (g *gen) shape(withGemm bool) {
	p := g.p
	p.Threads = g.pick(32, 64, 128, 128, 256)
	if withGemm {
		for {
			p.BM, p.BN = g.pick(16, 32, 64, 64, 128), g.pick(8, 16, 32, 64)
			if p.BM*p.BN <= 4096 && gemmWarpsFit(ir.Square, p.BM, p.BN, p.Threads/32) {
				break
			}
			p.Threads = g.pick(32, 64, 128, 128, 256)
		}
	} else {
		p.BM, p.BN = g.pick(4, 8, 16, 32, 64), g.pick(8, 16, 32, 64, 128)
		for p.BM*p.BN > 4096 {
			p.BN /= 2
		}
	}
	p.Blocks = 1 + g.r.IntN(4)
	p.Rows = p.Blocks * p.BM
	if g.coin(2) {
		p.Rows -= g.r.IntN(p.BM) // a partial last row tile
	}
	p.SymRows = g.coin(4)
	if g.coin(5) { // a persistent walk over the row tiles
		p.Spread = 1 + g.r.IntN(3)
	}
	p.SplitN = g.coin(6) && (p.Threads >= 128 || g.sw.SplitNSmallBlock)
	p.UnboundSym = g.sw.UnboundSym && g.coin(4)
}

// cols of the row-indexed tensors: NT tiles of BN, the last maybe partial.
func (g *gen) cols(nt int) int {
	c := nt * g.p.BN
	if g.coin(2) {
		c -= g.r.IntN(g.p.BN)
	}
	return c
}

func (g *gen) add(b Buf) int {
	if b.Name == "" {
		prefix := map[Scope]string{In: "X", Out: "Y", Shared: "s", Frag: "f", Local: "l"}[b.Scope]
		b.Name = fmt.Sprintf("%s%d", prefix, len(g.p.Bufs))
		if n := clashNames[g.names.IntN(len(clashNames))]; g.names.IntN(6) == 0 && !g.used[n] {
			b.Name = n
		}
	}
	g.used[b.Name] = true
	g.p.Bufs = append(g.p.Bufs, b)
	return len(g.p.Bufs) - 1
}

// clashNames are names the generated code declares or reads itself (the
// thread index, loop counters, numbered temporaries, tl's loop variables,
// C++ words), which a buffer may take: the compiler must keep them apart
// (compiler/cudagen/names.go).
var clashNames = []string{
	"tid", "warp", "lane", "smem", "bx", "by", "val", "vec", "ok", "r", "c", "it", "j", "s", "t", "p", "q", "x",
	"idx", "next", "ring", "dot", "wg", "lo", "hi", "d", "da", "db", "k0", "i0", "i1", "c3", "t1", "red2", "w4",
	"cp1", "gp2", "part", "half", "size", "group", "int", "float", "for", "auto", "threadIdx", "uint4",
}

// storeDT is a storage type for a tile or tensor; f8 only in shared
// memory and global tensors, which every backend converts alike.
func (g *gen) storeDT(f8 bool) ir.DType {
	dts := []ir.DType{ir.F32, ir.F32, ir.F16, ir.BF16}
	if f8 {
		dts = append(dts, ir.F8E4M3, ir.F8E5M2)
	}
	return dts[g.r.IntN(len(dts))]
}

// tiles allocates the on-chip tiles of the copy/parallel/reduce part.
func (g *gen) tiles() {
	p := g.p
	fam := g.family(ir.F32)
	for range g.r.IntN(2) {
		g.frag2[fam] = append(g.frag2[fam], g.add(Buf{Scope: Frag, DT: g.storeDT(false), Shape: []int{p.BM, p.BN}, Family: fam}))
	}
	for range 1 + g.r.IntN(2) {
		g.sh2 = append(g.sh2, g.add(Buf{Scope: Shared, DT: g.storeDT(true), Shape: []int{p.BM, p.BN}, Plain: g.coin(3)}))
	}
	if g.coin(2) {
		g.shRow = append(g.shRow, g.add(Buf{Scope: Shared, DT: g.storeDT(true), Shape: []int{p.BM}}))
	}
	if g.coin(2) {
		g.shCol = append(g.shCol, g.add(Buf{Scope: Shared, DT: g.storeDT(true), Shape: []int{p.BN}}))
	}
	if p.BN <= 32 && g.coin(2) {
		g.loc = append(g.loc, g.add(Buf{Scope: Local, DT: g.storeDT(false), Shape: []int{p.BN}}))
	}
	if g.extra.IntN(3) == 0 { // a per-column vector read straight from global memory (a norm's weight)
		g.inCol = append(g.inCol, g.add(Buf{Scope: In, DT: []ir.DType{ir.F32, ir.F16, ir.BF16}[g.extra.IntN(3)], Shape: []int{p.BN}}))
	}
	if g.sw.SharedNoDims && g.coin(3) { // filled and read as a scalar
		g.scalar = g.add(Buf{Scope: Shared, DT: ir.F32})
	}
	if g.coin(4) {
		sc := Shared
		if g.coin(2) {
			sc = Frag
		}
		g.i32 = append(g.i32, g.add(Buf{Scope: sc, DT: ir.I32, Shape: []int{p.BM, p.BN}, Family: g.family(ir.I32)}))
	}
}

// family starts a fragment family: one [BM,BN] fragment of dt, and
// maybe its row, column and scalar projections.
func (g *gen) family(dt ir.DType) int {
	p := g.p
	f := g.nfam
	g.nfam++
	if dt == ir.I32 {
		return f
	}
	g.frag2[f] = append(g.frag2[f], g.add(Buf{Scope: Frag, DT: dt, Shape: []int{p.BM, p.BN}, Family: f}))
	for range g.r.IntN(3) {
		g.rowF[f] = append(g.rowF[f], g.add(Buf{Scope: Frag, DT: ir.F32, Shape: []int{p.BM}, Family: f}))
	}
	if g.coin(3) {
		g.colF[f] = append(g.colF[f], g.add(Buf{Scope: Frag, DT: ir.F32, Shape: []int{p.BN}, Family: f}))
	}
	if len(g.rowF[f]) > 0 && g.coin(3) {
		g.oneF[f] = append(g.oneF[f], g.add(Buf{Scope: Frag, DT: ir.F32, Shape: []int{1}, Family: f}))
	}
	return f
}

// input adds a row-indexed input [Rows, cols] (or a BSHD-like [2, Rows,
// cols] stored with the rows outermost).
func (g *gen) input(cols int) int {
	b := Buf{Scope: In, DT: g.storeDT(true), Shape: []int{RowsDim, cols}}
	if g.coin(3) {
		b.Shape = []int{2, RowsDim, cols}
		b.Perm = []int{1, 0, 2}
	}
	return g.add(b)
}

// output adds a row-indexed output shaped like in (a new one each store).
func (g *gen) output(like []int, dt ir.DType) int {
	b := Buf{Scope: Out, DT: dt, Shape: append([]int(nil), like...)}
	if len(like) == 2 && g.coin(4) {
		b.Shape = []int{like[0], 3, like[1]}
		b.Perm = []int{1, 0, 2}
		if g.coin(2) {
			b.Shape = []int{3, like[0], like[1]}
			b.Perm = []int{1, 2, 0}
		}
	}
	return g.add(b)
}

// tileRef is the [BM,BN] block tile at column tile j (jv: the column
// loop's Spec.Var, or 0 for tile 0) of a row-indexed global tensor.
func (g *gen) tileRef(buf, jv int) Ref {
	b := g.p.Bufs[buf]
	var specs []Spec
	for i, d := range b.Shape {
		switch {
		case d == RowsDim:
			specs = append(specs, Spec{Var: 1, N: g.p.BM})
		case i == len(b.Shape)-1:
			specs = append(specs, Spec{Var: jv, N: g.p.BN})
		default:
			specs = append(specs, Spec{Drop: true, Const: g.r.IntN(d)})
		}
	}
	return Ref{Buf: buf, Spec: specs}
}

// rowRef is the block's rows of a [Rows] tensor.
func (g *gen) rowRef(buf int) Ref {
	return Ref{Buf: buf, Spec: []Spec{{Var: 1, N: g.p.BM}}}
}

func whole(buf int) Ref { return Ref{Buf: buf} }
