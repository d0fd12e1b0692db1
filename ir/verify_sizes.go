package ir

// Register tiles have no hardware limit the verifier could read off the
// target: past the registers a thread has, the compiler spills them to
// local memory, which is slow but correct. A thread has at most 255
// 32-bit registers; MaxRegElems is four times what they could ever hold,
// far past a sane kernel (FlashAttention's and MLA's accumulators take 128
// elements a thread) yet small enough that a mistyped size is refused
// rather than sent to a compiler that dies allocating it.
const (
	MaxRegElems   = 1024 // elements of one fragment a thread holds
	MaxLocalElems = 1024 // elements of one local array (each thread has its own)
)

// allocSize checks an on-chip tile's element count: it must not overflow,
// and a register tile must fit the limits above. owners gives the
// warpgroup that owns a fragment used in Warpgroup blocks: its elements
// are spread over that warpgroup's 128 threads only.
func (v *verifier) allocSize(b *Buffer, threads int, owners map[*Buffer]int) {
	n, ok := b.CheckedElems()
	if !ok {
		s, _ := b.StaticShape()
		v.errorf("alloc", b.Pos, "%s: the element count of %v overflows", b.Name, s)
		return
	}
	switch b.Scope {
	case Shared:
		if _, ok := MulChecked(n, int64(b.DType.Bytes())); !ok {
			v.errorf("alloc", b.Pos, "%s: the byte count of %d elements overflows", b.Name, n)
		}
	case Fragment:
		spread := int64(threads)
		if _, owned := owners[b]; owned {
			spread = 128
		}
		if spread <= 0 {
			return // the kernel's threads are refused already
		}
		if per := (n + spread - 1) / spread; per > MaxRegElems {
			v.errorf("alloc", b.Pos, "%s: %d elements over %d threads is %d a thread; a fragment may hold at most %d a thread (a thread has 255 registers)", b.Name, n, spread, per, MaxRegElems)
		}
	case Local:
		if n > MaxLocalElems {
			v.errorf("alloc", b.Pos, "%s: %d elements; a local array may hold at most %d (each thread has its own, in 255 registers)", b.Name, n, MaxLocalElems)
		}
	}
}

// paramSize checks a parameter's constant sizes: its element count and
// its farthest element's offset must not overflow.
func (v *verifier) paramSize(p *Buffer) {
	n, off := int64(1), int64(0)
	for i, d := range p.Shape {
		c, ok := ConstInt(d)
		if !ok || c < 1 {
			continue
		}
		if n, ok = MulChecked(n, c); !ok {
			v.errorf("param", p.Pos, "%s: the element count overflows", p.Name)
			return
		}
		if i >= len(p.Strides) {
			continue
		}
		s, ok := ConstInt(p.Strides[i])
		if !ok {
			continue
		}
		step, ok1 := MulChecked(c-1, s)
		sum, ok2 := AddChecked(off, step)
		if !ok1 || !ok2 {
			v.errorf("param", p.Pos, "%s: the offset of its last element overflows", p.Name)
			return
		}
		off = sum
	}
}

// gridSize checks the grid's constant dims: at least one block each, and
// a count of blocks times threads that does not overflow.
func (v *verifier) gridSize(k *Kernel) {
	total := int64(max(k.Threads, 1))
	for i, g := range k.Grid {
		c, ok := ConstInt(g)
		if !ok {
			continue
		}
		if c < 1 {
			v.errorf("kernel", k.P, "grid dim %d is %d; want at least 1 block", i, c)
			continue
		}
		if total, ok = MulChecked(total, c); !ok {
			v.errorf("kernel", k.P, "the grid's blocks times threads overflows")
			return
		}
	}
}
