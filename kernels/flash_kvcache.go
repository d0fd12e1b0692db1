package kernels

import (
	"fmt"
	"math/rand/v2"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tensor"
	"github.com/tilego/tilego/tl"
)

// FlashAttention over a paged KV cache (FlashAttention's
// flash_attn_with_kvcache with a block table): decoding or prefill with a
// cached prefix. Q is [B, Sq, H, Dqk] (the new tokens' queries, BSHD);
// the cache is KCache [pages, Page, HKV, Dqk] and VCache [pages, Page,
// HKV, Dv], batch entry b's keys in pages Table[b, 0], Table[b, 1], ...,
// Lens[b] of them (the new tokens' keys already in the cache, as
// flash_attn_with_kvcache leaves them after appending). Causal aligns the
// queries with the last keys: query i sees keys up to i + Lens[b] − Sq.

// KVCacheShape is a paged-cache attention problem: AttnShape's B, H, HKV,
// Sq, Dqk, Dv, Causal, DType and Scale (Skv is the longest cache), the
// page size (the kernel's key tile), pages a batch entry may hold and the
// cache's pages in all.
type KVCacheShape struct {
	AttnShape
	Page, MaxPages, Pages int
}

// FlashAttentionKVCache is the paged-cache forward: a block per query tile
// of a head of a batch entry, its key tiles the entry's pages. The
// config's N must be the page size; M, N, stages and threads only.
func FlashAttentionKVCache(v KVCacheShape, c AttnConfig) *tl.Func {
	s := v.AttnShape
	s.BSHD = true
	f := tl.NewFunc("flash_attention_kvcache")
	Q := s.rows(f.In, "Q", s.H, s.Sq, s.Dqk)
	KC := f.In("KCache", s.DType, v.Pages, v.Page, s.HKV, s.Dqk)
	VC := f.In("VCache", s.DType, v.Pages, v.Page, s.HKV, s.Dv)
	Table := f.In("Table", tl.I32, s.B, v.MaxPages)
	Lens := f.In("Lens", tl.I32, s.B)
	O := s.rows(f.Out, "O", s.H, s.Sq, s.Dv)
	LSE := f.Out("LSE", tl.F32, s.B, s.H, s.Sq)
	if c.N != v.Page {
		f.Refuse("the key tile (n=%d) must be the page size %d", c.N, v.Page)
		c.N = v.Page
	}
	if c.WS || c.PingPong || c.Overlap || c.Persistent || c.Prefetch || c.Draw || c.Cluster > 1 || c.Direct {
		f.Refuse("paged-cache FlashAttention takes M, N, stages and threads (config %s)", ConfigFields(c))
		c = AttnConfig{M: c.M, N: c.N, Stages: c.Stages, Threads: c.Threads}
	}
	if s.Mods != nil {
		f.Refuse("paged-cache FlashAttention does not take modifiers (%s) yet", s.Mods.Name)
		s.Mods = nil
	}
	f.Kernel(tl.Grid(tl.CeilDiv(s.Sq, c.M), s.H, s.B), c.Threads, func(k *tl.Block) {
		bx, h, b := k.Idx()
		src := attnSrc{Q: Q, K: KC, V: VC, table: Table, skv: k.Let(tl.Min(Lens.At(b), v.MaxPages*v.Page))}
		r := attnLoopFrom(k, src, s, c, b, h, bx, nil, nil)
		finalRows(k, r, O, LSE, s, c, b, h, bx)
	})
	return f
}

// ---- flash-attention-kvcache ----

var attentionKVCacheEntry = &Entry{
	Name: "flash-attention-kvcache",
	Doc:  "FlashAttention forward over a paged KV cache (block table, per-entry cache lengths), as flash_attn_with_kvcache",
	Flags: []Flag{
		{Name: "batch", Default: "2", Help: "batch entries"},
		{Name: "heads", Default: "4", Help: "query heads"},
		{Name: "heads-kv", Help: "key/value heads; must divide --heads (default: --heads)"},
		{Name: "seq-q", Default: "1", Help: "new tokens a batch entry (1: decoding)"},
		{Name: "mean-kv", Default: "300", Help: "mean cache length; lengths vary ±50% around it (seeded), at least --seq-q"},
		{Name: "page", Default: "64", Help: "page size in tokens: the key tile"},
		{Name: "dim", Default: "64", Help: "head dimension of Q and K"},
		{Name: "dim-v", Help: "head dimension of V and O (default: --dim)"},
		{Name: "causal", Default: "false", Help: "the new tokens causal among themselves and after the cache", Bool: true},
		{Name: "dtype", Default: "bf16", Help: "element type of Q, the cache and O: bf16 or f16"},
		{Name: "scale", Default: "0", Arg: "X", Help: "softmax scale; 0 means 1/sqrt(dim)"},
	},
	parse: parseKVCache,
}

func parseKVCache(v values) (Problem, error) {
	var s KVCacheShape
	var err error
	var mean int
	get := func(dst *int, name string, def int) {
		if err == nil {
			*dst, err = v.int(name, def)
		}
	}
	get(&s.B, "batch", 0)
	get(&s.H, "heads", 0)
	get(&s.HKV, "heads-kv", s.H)
	get(&s.Sq, "seq-q", 0)
	get(&mean, "mean-kv", 0)
	get(&s.Page, "page", 0)
	get(&s.Dqk, "dim", 0)
	get(&s.Dv, "dim-v", s.Dqk)
	if err != nil {
		return nil, err
	}
	if s.H%s.HKV != 0 {
		return nil, fmt.Errorf("--heads %d is not a multiple of --heads-kv %d", s.H, s.HKV)
	}
	if s.Page%16 != 0 || s.Page > 256 {
		return nil, fmt.Errorf("--page %d: want a multiple of 16, at most 256 (the kernel's key tile)", s.Page)
	}
	if s.Causal, err = v.bool("causal"); err != nil {
		return nil, err
	}
	if s.DType, err = v.dtype("dtype", ir.BF16, ir.F16); err != nil {
		return nil, err
	}
	if s.Scale, err = v.scale(); err != nil {
		return nil, err
	}
	p := &kvCacheProblem{s: s}
	r := rand.New(rand.NewPCG(uint64(s.B), uint64(mean)))
	for range s.B {
		n := max(s.Sq, mean/2+r.IntN(mean+1))
		p.lens = append(p.lens, n)
		p.s.Skv = max(p.s.Skv, n)
	}
	p.s.MaxPages = (p.s.Skv + s.Page - 1) / s.Page
	for _, n := range p.lens {
		p.s.Pages += (n + s.Page - 1) / s.Page
	}
	p.s.Pages++ // one more than used: a page no entry owns
	if _, err := elems("the cache", p.s.Pages, s.Page, s.HKV, max(s.Dqk, s.Dv)); err != nil {
		return nil, err
	}
	return p, nil
}

type kvCacheProblem struct {
	s    KVCacheShape
	lens []int // each entry's cache length
}

func (p *kvCacheProblem) Kernel() string { return attentionKVCacheEntry.Name }

func (p *kvCacheProblem) Shape() Fields {
	s := p.s
	sum := 0
	for _, n := range p.lens {
		sum += n
	}
	return Fields{{"batch", s.B}, {"heads", s.H}, {"heads_kv", s.HKV}, {"seq_q", s.Sq}, {"kv_sum", sum}, {"kv_max", s.Skv},
		{"page", s.Page}, {"dim", s.Dqk}, {"dim_v", s.Dv}, {"causal", s.Causal}, {"dtype", s.DType.String()}, {"scale", s.SoftmaxScale()}}
}

// DefaultConfig: 16 query rows (decoding's few) up to 64, the page as the
// key tile, one stage, 128 threads.
func (p *kvCacheProblem) DefaultConfig() Config {
	return AttnConfig{M: min(64, roundUp(p.s.Sq, 16)), N: p.s.Page, Stages: 1, Threads: 128}
}

// GPUConfig: 64 query rows over 128 threads (four warps of 16 whole
// rows, or one warpgroup's wgmma: decoding's few queries pad the tile),
// the page as the key tile, two stages.
func (p *kvCacheProblem) GPUConfig() Config {
	return AttnConfig{M: 64, N: p.s.Page, Stages: 2, Threads: 128}
}

// GPUConfigFor: on AMD one stage over four waves (64 KiB of LDS), else
// GPUConfig.
func (p *kvCacheProblem) GPUConfigFor(arch string) Config {
	if amd(arch) {
		return AttnConfig{M: 64, N: p.s.Page, Stages: 1, Threads: 256}
	}
	return p.GPUConfig()
}

func (p *kvCacheProblem) Program(c Config) (*tl.Func, error) {
	cfg, err := attnConfigOf(p, c)
	if err != nil {
		return nil, err
	}
	return FlashAttentionKVCache(p.s, cfg), nil
}

// Inputs are Q and the cache (normal, std 1; the page no entry owns too),
// the block table (the entries' pages in a seeded shuffled order; slots
// past an entry's pages 0, never read), the lengths, and O and LSE
// poisoned.
func (p *kvCacheProblem) Inputs(seed uint64) []*tensor.Tensor {
	s := p.s
	q := tensor.NewStrided(s.DType, []int{s.B, s.H, s.Sq, s.Dqk}, tensor.StridesFor([]int{s.B, s.H, s.Sq, s.Dqk}, []int{0, 2, 1, 3})).Rand(seed, 1)
	kc := tensor.New(s.DType, s.Pages, s.Page, s.HKV, s.Dqk).Rand(seed+1, 1)
	vc := tensor.New(s.DType, s.Pages, s.Page, s.HKV, s.Dv).Rand(seed+2, 1)
	table := tensor.New(ir.I32, s.B, s.MaxPages)
	lens := tensor.New(ir.I32, s.B)
	order := rand.New(rand.NewPCG(seed, 5)).Perm(s.Pages)
	next := 0
	for b, n := range p.lens {
		lens.Data[b] = float64(n)
		for j := range (n + s.Page - 1) / s.Page {
			table.Data[b*s.MaxPages+j] = float64(order[next])
			next++
		}
	}
	o := tensor.NewStrided(s.DType, []int{s.B, s.H, s.Sq, s.Dv}, tensor.StridesFor([]int{s.B, s.H, s.Sq, s.Dv}, []int{0, 2, 1, 3})).Fill(nan)
	lse := tensor.New(ir.F32, s.B, s.H, s.Sq).Fill(nan)
	return []*tensor.Tensor{q, kc, vc, table, lens, o, lse}
}

// gathered is batch entry b's keys (or values) of the cache c, gathered
// through the table into [1, HKV, len, D].
func (p *kvCacheProblem) gathered(c, table *tensor.Tensor, b int) *tensor.Tensor {
	s, n := p.s, p.lens[b]
	d := c.Shape[3]
	out := tensor.New(c.DType, 1, s.HKV, n, d)
	for t := range n {
		page := int(table.At(b, t/s.Page))
		for hk := range s.HKV {
			for x := range d {
				out.Data[(hk*n+t)*d+x] = c.At(page, t%s.Page, hk, x)
			}
		}
	}
	return out
}

// Check compares every query row with float64 on each entry's gathered
// keys and values.
func (p *kvCacheProblem) Check(args []*tensor.Tensor, seed uint64) Report {
	s := p.s
	ra := s.refAttn()
	o := Measure{Name: "o", Tol: Tolerance(s.DType)}
	lse := Measure{Name: "lse", Tol: LSETolerance}
	for b := range s.B {
		k, v := p.gathered(args[1], args[3], b), p.gathered(args[2], args[3], b)
		q := &tensor.Tensor{DType: s.DType, Shape: []int{1, s.H, s.Sq, s.Dqk}, Strides: args[0].Strides, Data: args[0].Data[args[0].Offset(b, 0, 0, 0):]}
		for h := range s.H {
			for i := range s.Sq {
				want, wl := ra.AttentionRow(q, k, v, 0, h, i)
				for d, w := range want {
					o.Diff.Add(args[5].At(b, h, i, d), w)
				}
				lse.Diff.Add(args[6].At(b, h, i), wl)
			}
		}
	}
	return Report{Measures: []Measure{o, lse}, Checked: "all"}
}

// FLOPs counts each entry's two matrix multiplies over its cache, halved
// when causal.
func (p *kvCacheProblem) FLOPs() float64 {
	s := p.s
	f := 0.0
	for _, n := range p.lens {
		f += 2 * float64(s.H) * float64(s.Sq) * float64(n) * float64(s.Dqk+s.Dv)
	}
	if s.Causal {
		f /= 2
	}
	return f
}
