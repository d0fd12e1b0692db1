package kernels

import "github.com/tilego/tilego/tl"

// causalWalk is the schedule of a causal persistent walk over pairs of
// query tiles (an even count nM of them a head): block g of a grid of
// blocks runs n tiles, its i-th being tile(i).
//
// Every block walks F = P / grid whole rounds of pairs (P pairs in all,
// each nM+1 KV tiles long whatever its place: causalPair), two tiles a
// pair. Walked as pairs too, the R = P - F·grid pairs left would keep R
// SMs busy for nM+1 KV tiles while the others idle. The tail is packed
// instead into bins no longer than its longest tile (nM): pair j's
// longer tile with pair j-1's shorter when both are of one head (nM-p
// plus p KV tiles, p the pair's place in its head), and the shorter tiles
// of each head's last pair (half = nM/2 long each) two to a bin. When the
// bins outnumber the grid, the tail runs as pairs. On an H100 with 132
// SMs, d128 causal 512 tokens (1024 pairs of 5 KV tiles) then takes 7·5+4
// KV tiles a block rather than 8·5, the best any order of the whole tiles
// can do (a longest-first greedy packing of every tile also ends at 39).
func causalWalk(s AttnShape, c AttnConfig, g, grid tl.Expr) (n tl.Expr, tile func(i tl.Expr) (b, h, bx tl.Expr)) {
	nM := (s.Sq + c.M - 1) / c.M
	half, pairs := nM/2, s.B*s.H*nM/2
	full := tl.Int(pairs).Div(grid)                  // F
	j0 := full.Mul(grid)                             // the tail's first pair
	rest := tl.Int(pairs).Sub(j0)                    // R
	d := tl.Int(half - 1).Sub(j0.Mod(half))          // the tail's first pair ending a head, less j0
	left := tl.CeilDiv(tl.Max(rest.Sub(d), 0), half) // the shorter tiles no bin of a longer one takes
	bins := rest.Add(tl.CeilDiv(left, 2))
	fits := bins.Le(grid)

	inPair := g.Lt(rest) // g's bin starts with pair j0+g's longer tile
	withShort := j0.Add(g).Mod(half).Gt(0).And(g.Gt(0))
	k0 := g.Sub(rest).Mul(2) // g's first leftover shorter tile
	packed := tl.Select(inPair, tl.Select(withShort, 2, 1), tl.Select(g.Lt(bins), tl.Select(k0.Add(1).Lt(left), 2, 1), 0))
	n = full.Mul(2).Add(tl.Select(fits, packed, tl.Select(inPair, 2, 0)))

	tile = func(i tl.Expr) (b, h, bx tl.Expr) {
		t := i.Sub(full.Mul(2)) // the tile's place in g's tail
		id := tl.Select(i.Lt(full.Mul(2)), g.Add(i.Div(2).Mul(grid)).Mul(2).Add(i.Mod(2)), j0.Add(g).Mul(2).Add(t))
		pb, ph, pbx := causalPair(id, s, c) // a whole round's pair, or the tail's as pairs
		pair := tl.Select(inPair, j0.Add(g).Sub(t), j0.Add(d).Add(k0.Add(t).Mul(half)))
		long := inPair.And(t.Eq(0))
		head, p := pair.Div(half), pair.Mod(half)
		tb, th, tbx := head.Div(s.H), head.Mod(s.H), tl.Select(long, tl.Int(2*half-1).Sub(p), p)
		binned := i.Ge(full.Mul(2)).And(fits)
		return tl.Select(binned, tb, pb), tl.Select(binned, th, ph), tl.Select(binned, tbx, pbx)
	}
	return n, tile
}
