package cudagen

import (
	"fmt"

	"github.com/tilego/tilego/ir"
)

// Clusters of two (sm_90a, with a producer; tl's Cluster). The query
// tiles of one attention head all stream the same K and V tiles, each
// block reading them from L2 on its own. With the blocks of consecutive
// x in clusters of two (__cluster_dims__), each block's producer loads
// half of every ring tile, rows [r·n/2, (r+1)·n/2) for cluster rank r,
// by a TMA multicast that lands at the same shared offset in both blocks
// and completes on the same barrier offset in both: the pair reads each
// tile once. So:
//   - each block's full barrier still expects the whole tile's bytes, half
//     from its own producer and half from its partner's;
//   - a slot is free only when the consumers of both blocks are done with
//     it (the partner's multicast writes here too): every consumer warp
//     arrives on its slot's empty barrier in both blocks, which expect
//     twice the warps;
//   - both blocks meet (barrier.cluster) after setting up their barriers,
//     before any arrival or multicast can reach them, and before exit,
//     so none reaches a block that is gone.
// It applies where both blocks of a cluster would load the same tiles:
// every ring copy's address and the loop's bounds (and those of a serial
// loop around it, such as MLA's split kernel's walk over its chunks) are
// independent of the x index, the grid's x is even, and there is no
// rasterization (which remaps the block index). Tiles a walk's producer
// loads per block (persistent_loads.go: a query tile) stay the block's own. The
// halves keep whole 8-row atoms of the 128B swizzle (n a multiple of 16),
// so each lands as the full box would.

// planCluster decides whether the producer's loop multicasts, and halves
// its copies' TMA boxes if so.
func planCluster(c *compilation) {
	k, w := c.f.Kernel, c.ws
	if k.Cluster != 2 || w == nil || k.Raster != nil || !c.opts.Switches.Choose(SwitchCluster, true) {
		return
	}
	l := c.tma[w.loop]
	if l == nil {
		return
	}
	if n, ok := ir.ConstInt(k.Grid[0]); !ok || n%2 != 0 {
		return
	}
	x := k.Idx[0]
	bounds := []ir.Expr{w.loop.Start, w.loop.Stop}
	if o := l.outer; o != nil { // both blocks must walk the same outer iterations too
		bounds = append(bounds, o.Start, o.Stop)
	}
	for _, e := range bounds {
		if usesVar(e, x) {
			return
		}
	}
	for cp := range l.copies {
		if c.smem.bufs[cp.Dst.Buf].rows%16 != 0 {
			return
		}
		for _, e := range cp.Src.Start {
			if usesVar(e, x) {
				return
			}
		}
	}
	for _, tc := range l.copies {
		c.tmaSpecs[tc.spec].Box[tc.row] /= 2
	}
	c.cluster = true
}

// usesVar: expression e reads v.
func usesVar(e ir.Expr, v *ir.Var) bool {
	found := false
	ir.WalkExpr(e, func(x ir.Expr) {
		if x == ir.Expr(v) {
			found = true
		}
	})
	return found
}

// clusterLoad is how the producer issues panel p of a ring copy into dst
// in a cluster: its rank's half, multicast to both blocks.
func (e *emitter) clusterLoad(tc *tmaCopy, sb *smemBuf, cp *ir.Copy, p int, dst, bar string) {
	half := sb.rows / 2
	e.line("tl::tma_load_mc_%dd(%s + crank * %d, &tm%d, %s, %s, 3);", tc.rank, dst, half*128, tc.spec,
		e.tmaCoordsAt(cp.Src, p, fmt.Sprintf(" + crank * %d", half)), bar)
}
