package ir

import "fmt"

// FragmentOwners returns the warpgroup that owns each fragment a
// Warpgroup block uses, and an error for each fragment used by two
// warpgroups (or by one in a block and by all outside it) and each
// statement a block may not hold: ops that spread a tile over all the
// block's threads (copies between shared and global memory, fills and
// reductions of shared tiles, atomic adds, prefetches).
func FragmentOwners(body []Stmt) (map[*Buffer]int, ErrorList) {
	type use struct {
		role int // -1: outside any block
		pos  Pos
	}
	first := map[*Buffer]use{}
	var errs ErrorList
	fail := func(pos Pos, format string, args ...any) {
		errs = append(errs, &Error{Op: "warpgroup", Pos: pos, Msg: fmt.Sprintf(format, args...)})
	}
	var visit func(body []Stmt, role int)
	visit = func(body []Stmt, role int) {
		for _, s := range body {
			if w, ok := s.(*Warpgroup); ok {
				visit(w.Body, w.Index)
				continue
			}
			if role >= 0 {
				if why := roleRefuses(s); why != "" {
					fail(s.Position(), "%s", why)
				}
			}
			for _, b := range DirectUses(s) {
				if b == nil || b.Scope != Fragment {
					continue
				}
				u, seen := first[b]
				switch {
				case !seen:
					first[b] = use{role, s.Position()}
				case u.role != role:
					fail(s.Position(), "fragment %s is used by %s here and by %s at %s; pass it through a shared tile", b.Name, roleName(role), roleName(u.role), u.pos)
				}
			}
			switch s := s.(type) {
			case *For:
				visit(s.Body, role)
			case *While:
				visit(s.Body, role)
			case *Parallel:
				visit(s.Body, role)
			case *Deferred:
				visit(s.Body, role)
			case *If:
				visit(s.Then, role)
				visit(s.Else, role)
			}
		}
	}
	visit(body, -1)
	owners := map[*Buffer]int{}
	for b, u := range first {
		if u.role >= 0 {
			owners[b] = u.role
		}
	}
	return owners, errs
}

func roleName(role int) string {
	if role < 0 {
		return "all warpgroups"
	}
	return fmt.Sprintf("warpgroup %d alone", role)
}

// roleRefuses says why a statement cannot be in a Warpgroup block ("" when
// it can).
func roleRefuses(s Stmt) string {
	frag := func(r Region) bool { return r.Buf != nil && r.Buf.Scope == Fragment }
	switch s := s.(type) {
	case *Copy:
		if !frag(s.Src) && !frag(s.Dst) {
			return "a copy in a warpgroup block must read or write a fragment"
		}
	case *Fill:
		if !frag(s.Dst) {
			return "a fill in a warpgroup block must fill a fragment"
		}
	case *Reduce:
		if s.Src == nil || s.Dst == nil || s.Src.Scope != Fragment || s.Dst.Scope != Fragment {
			return "a reduction in a warpgroup block must be of a fragment into one"
		}
	case *AtomicAdd, *Prefetch, *Ticket, *Signal, *WaitCount:
		return "no atomic adds, tickets, signals, waits for counts or prefetches in a warpgroup block"
	}
	return ""
}
