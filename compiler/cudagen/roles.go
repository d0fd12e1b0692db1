package cudagen

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tilego/tilego/ir"
)

// Warpgroup roles (ir.Warpgroup): a block of statements that one warpgroup
// runs while the others skip it. Its fragments are laid out over that
// warpgroup's 128 threads, its barriers are an mbarrier of those 128
// threads (planHandBars; a named barrier where shared memory has no room
// for it), and the barriers that hand its shared-memory results to the
// other warpgroups are put around the block, where all of them meet.

// roleBar is the first named barrier of the warpgroup blocks (one per
// warpgroup): 0 is __syncthreads', 1 the consumers', 2 and 3 ping-pong's.
const roleBar = 4

// assignRoles records the warpgroup that owns each fragment a Warpgroup
// block uses (the verifier has refused fragments two warpgroups share).
func assignRoles(c *compilation) error {
	var errs ir.ErrorList
	c.roles, errs = ir.FragmentOwners(c.f.Kernel.Body)
	return errs.Err()
}

// threadsOf is how many threads a fragment is laid out over: its
// warpgroup's 128 when a Warpgroup block owns it, else the block's.
func (c *compilation) threadsOf(b *ir.Buffer) int {
	if _, ok := c.roles[b]; ok {
		return 128
	}
	return c.f.Kernel.Threads
}

// dumpRoles lists the fragments each warpgroup owns.
func dumpRoles(c *compilation) string {
	var lines []string
	for b, r := range c.roles {
		lines = append(lines, fmt.Sprintf("%s: warpgroup %d", b.Name, r))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// warpgroup emits a Warpgroup block. The barriers its reads and writes of
// shared memory are owed go before it, where every warpgroup meets; inside,
// only its warpgroup meets (a named barrier of 128). After it, the other
// warpgroups have met none of its barriers: its writes are unfenced for
// them, and its reads still to be waited for before they overwrite.
func (e *emitter) warpgroup(s *ir.Warpgroup) {
	if e.role != nil || e.par != nil {
		e.fail(errAt("warpgroup", s.P, "a warpgroup block inside another block or a parallel loop"))
		return
	}
	reads, writes := e.readsShared(s.Body), e.writesShared(s.Body)
	e.syncIfDirty(reads)
	if writes {
		e.beforeSharedWrite()
	}
	before := e.state()
	e.open("if (tid / 128 == %d)", s.Index)
	e.role, e.roleSeen, e.roleWrote = s, nil, nil
	e.stmts(s.Body)
	e.role = nil
	inside := e.state()
	e.close()
	e.setState(syncState{dirty: before.dirty || inside.dirty || writes, pending: before.pending || inside.pending, read: before.read || reads,
		unfenced: before.unfenced || inside.unfenced || writes})
}

// roleSync is a barrier of the warpgroup block being emitted: its own 128
// threads alone (the others are not in the block): an mbarrier the
// warpgroup arrives at and waits on (planHandBars says why), or where
// there is none a named barrier.
func (e *emitter) roleSync() {
	e.proxyFence()
	if off := e.c.roleMbar(e.role.Index); off >= 0 {
		e.line("tl::mbar_arrive_wait(tl::smem_addr(smem + %d)); // warpgroup %d's own", off, e.role.Index)
	} else {
		e.line("tl::bar_sync(%d, 128);", roleBar+e.role.Index)
	}
	e.dirty, e.read = false, false
	clear(e.roleSeen)
	clear(e.roleWrote)
}

// roleStmt notes, once the statement s of a warpgroup block is emitted,
// the shared tiles it read or wrote: a later write in the block waits at
// the warpgroup's barrier only for tiles touched since the last one, a
// later read only for tiles written since (syncIfDirty).
func (e *emitter) roleStmt(s ir.Stmt) func() {
	e.roleCur = s
	if _, ok := s.(*ir.If); ok { // its statements note their own, on the path that ran them
		return func() { e.roleCur = nil }
	}
	return func() {
		if e.roleSeen == nil {
			e.roleSeen = map[*ir.Buffer]bool{}
		}
		if e.roleWrote == nil {
			e.roleWrote = map[*ir.Buffer]bool{}
		}
		for _, reads := range []bool{true, false} {
			for b := range sharedBufs([]ir.Stmt{s}, reads) {
				e.roleSeen[b] = true
				if !reads {
					e.roleWrote[b] = true
				}
			}
		}
		e.roleCur = nil
	}
}

// roleRereads: the block's statement being emitted reads a shared tile the
// warpgroup wrote since its last barrier (or it cannot tell).
func (e *emitter) roleRereads() bool { return e.roleCurTouches(true, e.roleWrote) }

// roleRetouches: the block's statement being emitted writes a shared tile
// the warpgroup read or wrote since its last barrier (or it cannot tell).
func (e *emitter) roleRetouches() bool { return e.roleCurTouches(false, e.roleSeen) }

// roleCurTouches: the statement being emitted reads (or writes) a tile of
// set; true when no statement is known.
func (e *emitter) roleCurTouches(reads bool, set map[*ir.Buffer]bool) bool {
	if e.roleCur == nil {
		return true
	}
	for b := range sharedBufs([]ir.Stmt{e.roleCur}, reads) {
		if set[b] {
			return true
		}
	}
	return false
}

// wroteShared follows a write of shared memory. Outside a warpgroup
// block the threads meet at once (the writes fenced for wgmma and TMA on
// sm_90a); inside one the barrier waits for the next read in the block
// (syncIfDirty), or for the one after it, where all warpgroups meet.
func (e *emitter) wroteShared() {
	e.written()
	if e.role == nil {
		e.sync()
	}
}

// regBank is a register array, and the warpgroups whose fragments use it.
type regBank struct {
	name, ctype string
	n           int
	owners      map[int]bool // nil: a fragment of all threads
}

// declRegs declares the registers of allocs: a local's, and a fragment's. A
// fragment of one warpgroup's blocks takes the array of another
// warpgroup's fragment of the same type where there is one (of the same
// size if it can, else the largest: the accumulators, live across the
// loop, then share one array as long as the longer), as a C++
// reference: a thread runs only its own warpgroup's blocks, so the two are
// never live in the same thread, but the compiler, not knowing which
// warpgroup a thread is in, would keep both (MLA's two 128-register halves
// of O under Handoff spilled 3 KB so; with 96 and 160 columns the array
// is the longer one).
func (e *emitter) declRegs(allocs []*ir.Buffer) {
	var banks []*regBank
	bankOf := map[*ir.Buffer]*regBank{}
	for _, b := range allocs {
		if b.Scope != ir.Fragment {
			continue
		}
		ct, n := ctype(b.DType), e.c.layouts[b].NumRegs()
		if packed(b) {
			ct, n = "uint32_t", (n+1)/2
		}
		w, owned := e.c.roles[b]
		var k *regBank
		if owned {
			for _, o := range banks {
				if o.owners == nil || o.owners[w] || o.ctype != ct {
					continue
				}
				if k == nil || bankFits(o, k, n) {
					k = o
				}
			}
		}
		if k == nil {
			k = &regBank{name: b.Name, ctype: ct}
			if owned {
				k.owners = map[int]bool{}
			}
			banks = append(banks, k)
		}
		if owned {
			k.owners[w] = true
		}
		k.n = max(k.n, n)
		bankOf[b] = k
	}
	for _, b := range allocs {
		k := bankOf[b]
		switch {
		case b.Scope == ir.Local:
			e.line("%s %s[%d];", ctype(b.DType), b.Name, b.NumElems())
		case k == nil:
		case k.name == b.Name:
			e.line("%s %s[%d];", k.ctype, b.Name, k.n)
		default:
			e.line("%s (&%s)[%d] = %s; // warpgroup %d's, in the registers of another warpgroup's", k.ctype, b.Name, k.n, k.name, e.c.roles[b])
		}
	}
}

// bankFits: a fragment of n registers had better take bank o than k: o is
// of its size and k is not, or neither or both are and o is larger.
func bankFits(o, k *regBank, n int) bool {
	if (o.n == n) != (k.n == n) {
		return o.n == n
	}
	return o.n > k.n
}

// roleState is a copy of what the emission of a warpgroup block knows
// (roleSeen, roleWrote), with the sync state.
func (e *emitter) roleState() roleState {
	return roleState{e.state(), maps.Clone(e.roleSeen), maps.Clone(e.roleWrote)}
}
