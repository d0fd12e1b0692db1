package cuda

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tilego/tilego/ir"
)

// Warpgroup roles (ir.Warpgroup): a block of statements that one warpgroup
// runs while the others skip it. Its fragments are laid out over that
// warpgroup's 128 threads, its barriers are a named barrier of those 128
// threads, and the barriers that hand its shared-memory results to the
// other warpgroups are put around the block, where all of them meet.

// roleBar is the first named barrier of the warpgroup blocks (one per
// warpgroup): 0 is __syncthreads', 1 the consumers', 2 and 3 ping-pong's.
const roleBar = 4

// assignRoles finds the warpgroup that owns each fragment used in a
// Warpgroup block, and refuses a fragment used by two warpgroups (or by one
// in a block and by all outside) and the ops a block cannot hold.
func assignRoles(c *compilation) error {
	c.roles = map[*ir.Buffer]int{}
	type use struct {
		role int // -1: outside any block
		pos  ir.Pos
	}
	first := map[*ir.Buffer]use{}
	var errs []string
	var visit func(body []ir.Stmt, role int)
	visit = func(body []ir.Stmt, role int) {
		for _, s := range body {
			if w, ok := s.(*ir.Warpgroup); ok {
				visit(w.Body, w.Index)
				continue
			}
			if role >= 0 {
				if why := roleRefuses(s); why != "" {
					errs = append(errs, errAt("warpgroup", s.Position(), "%s", why).Error())
				}
			}
			for _, b := range ir.DirectUses(s) {
				if b.Scope != ir.Fragment {
					continue
				}
				u, seen := first[b]
				switch {
				case !seen:
					first[b] = use{role, s.Position()}
				case u.role != role:
					errs = append(errs, errAt("warpgroup", s.Position(), "fragment %s is used by %s here and by %s at %s; pass it through a shared tile", b.Name, roleName(role), roleName(u.role), u.pos).Error())
				}
			}
			switch s := s.(type) {
			case *ir.For:
				visit(s.Body, role)
			case *ir.While:
				visit(s.Body, role)
			case *ir.Parallel:
				visit(s.Body, role)
			case *ir.Deferred:
				visit(s.Body, role)
			case *ir.If:
				visit(s.Then, role)
				visit(s.Else, role)
			}
		}
	}
	visit(c.f.Kernel.Body, -1)
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(slices.Compact(errs), "\n"))
	}
	for b, u := range first {
		if u.role >= 0 {
			c.roles[b] = u.role
		}
	}
	return nil
}

func roleName(role int) string {
	if role < 0 {
		return "all warpgroups"
	}
	return fmt.Sprintf("warpgroup %d alone", role)
}

// roleRefuses says why a statement cannot be in a Warpgroup block ("" when
// it can): ops that spread a tile over all the block's threads, or would
// need all of them at a barrier, cannot run on one warpgroup.
func roleRefuses(s ir.Stmt) string {
	frag := func(r ir.Region) bool { return r.Buf != nil && r.Buf.Scope == ir.Fragment }
	switch s := s.(type) {
	case *ir.Copy:
		if !frag(s.Src) && !frag(s.Dst) {
			return "a copy in a warpgroup block must read or write a fragment"
		}
	case *ir.Fill:
		if !frag(s.Dst) {
			return "a fill in a warpgroup block must fill a fragment"
		}
	case *ir.Reduce:
		if s.Src.Scope != ir.Fragment || s.Dst.Scope != ir.Fragment {
			return "a reduction in a warpgroup block must be of a fragment into one"
		}
	case *ir.AtomicAdd, *ir.Prefetch:
		return "no atomic adds or prefetches in a warpgroup block"
	}
	return ""
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
	e.role, e.roleSeen = s, nil
	e.stmts(s.Body)
	e.role = nil
	inside := e.state()
	e.close()
	e.setState(syncState{dirty: before.dirty || inside.dirty || writes, pending: before.pending || inside.pending, read: before.read || reads})
}

// roleSync is a barrier of the warpgroup block being emitted: its own 128
// threads alone (the others are not in the block).
func (e *emitter) roleSync() {
	if e.dirty && e.c.opts.Arch == "sm_90a" {
		e.line("tl::fence_proxy_async();")
	}
	e.line("tl::bar_sync(%d, 128);", roleBar+e.role.Index)
	e.dirty, e.read = false, false
	clear(e.roleSeen)
}

// roleStmt notes, once the statement s of a warpgroup block is emitted,
// the shared tiles it read or wrote: a later write in the block waits at
// the warpgroup's barrier only for tiles touched since the last one (its
// reads wait for every write, in syncIfDirty).
func (e *emitter) roleStmt(s ir.Stmt) func() {
	e.roleCur = s
	return func() {
		if e.roleSeen == nil {
			e.roleSeen = map[*ir.Buffer]bool{}
		}
		for _, reads := range []bool{true, false} {
			for b := range sharedBufs([]ir.Stmt{s}, reads) {
				e.roleSeen[b] = true
			}
		}
		e.roleCur = nil
	}
}

// roleRetouches: the block's statement being emitted writes a shared tile
// the warpgroup read or wrote since its last barrier (or it cannot tell).
func (e *emitter) roleRetouches() bool {
	if e.roleCur == nil {
		return true
	}
	for b := range sharedBufs([]ir.Stmt{e.roleCur}, false) {
		if e.roleSeen[b] {
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
	e.dirty = true
	if e.role == nil {
		e.sync()
	}
}
