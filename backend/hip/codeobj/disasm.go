package codeobj

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
)

// Histogram counts a kernel's instructions by kind. Each count is of
// instructions in the code, not of executions.
type Histogram struct {
	Total        int // every instruction, without the padding after the kernel's end
	MFMA         int // v_mfma_*, v_smfmac_*: matrix core
	LDSRead      int // ds_read*
	LDSWrite     int // ds_write*
	GlobalLoad   int // global_load*
	GlobalStore  int // global_store*
	BufferLoad   int // buffer_load*
	BufferStore  int // buffer_store*
	ScratchLoad  int // scratch_load*: private memory, spills among it
	ScratchStore int // scratch_store*
	Waitcnt      int // s_waitcnt*
	Barrier      int // s_barrier
	VALU         int // v_* but the matrix core's: vector ALU, 4 cycles a wave64 instruction on a 16-lane SIMD
}

// count adds one instruction with mnemonic m.
func (h *Histogram) count(m string) {
	h.Total++
	switch {
	case strings.HasPrefix(m, "v_mfma_"), strings.HasPrefix(m, "v_smfmac_"):
		h.MFMA++
	case strings.HasPrefix(m, "ds_read"):
		h.LDSRead++
	case strings.HasPrefix(m, "ds_write"):
		h.LDSWrite++
	case strings.HasPrefix(m, "global_load"):
		h.GlobalLoad++
	case strings.HasPrefix(m, "global_store"):
		h.GlobalStore++
	case strings.HasPrefix(m, "buffer_load"):
		h.BufferLoad++
	case strings.HasPrefix(m, "buffer_store"):
		h.BufferStore++
	case strings.HasPrefix(m, "scratch_load"):
		h.ScratchLoad++
	case strings.HasPrefix(m, "scratch_store"):
		h.ScratchStore++
	case strings.HasPrefix(m, "s_waitcnt"):
		h.Waitcnt++
	case m == "s_barrier":
		h.Barrier++
	}
	if strings.HasPrefix(m, "v_") && !strings.HasPrefix(m, "v_mfma_") && !strings.HasPrefix(m, "v_smfmac_") {
		h.VALU++
	}
}

// parseDisassembly reads llvm-objdump -d output and returns each symbol's
// instructions by name, the mnemonics in order. The address and encoding
// that AMDGPU listings append as a "//" comment are ignored.
func parseDisassembly(text string) (map[string][]string, error) {
	syms := map[string][]string{}
	var cur string
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		raw := sc.Text()
		line := strings.TrimSpace(raw)
		if line == "" || line == "..." {
			continue
		}
		if name, ok := symbolHeader(line); ok {
			cur = name
			if _, dup := syms[name]; !dup {
				syms[name] = nil
			}
			continue
		}
		// Instructions are indented; section and file headers are not.
		if cur == "" || raw[0] != ' ' && raw[0] != '\t' {
			continue
		}
		if i := strings.Index(line, "//"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		if f := strings.Fields(line); len(f) > 0 {
			syms[cur] = append(syms[cur], f[0])
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("codeobj: disassembly: %w", err)
	}
	if len(syms) == 0 {
		return nil, fmt.Errorf("codeobj: no symbols in the disassembly")
	}
	return syms, nil
}

// symbolHeader recognises "0000000000001900 <name>:".
func symbolHeader(line string) (string, bool) {
	addr, rest, ok := strings.Cut(line, " <")
	if !ok || addr == "" || !strings.HasSuffix(rest, ">:") {
		return "", false
	}
	for _, c := range addr {
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return "", false
		}
	}
	return strings.TrimSuffix(rest, ">:"), true
}

// histogram counts mnemonics, leaving out the trailing s_nop/s_code_end
// fill that aligns the next function (nothing runs after s_endpgm).
func histogram(mnemonics []string) Histogram {
	n := len(mnemonics)
	for n > 0 && (mnemonics[n-1] == "s_nop" || mnemonics[n-1] == "s_code_end") {
		n--
	}
	var h Histogram
	for _, m := range mnemonics[:n] {
		h.count(m)
	}
	return h
}

// instr is one disassembled instruction: its address, mnemonic and, for a
// branch, its target's address (-1 otherwise).
type instr struct {
	addr, target int64
	op           string
}

// parseLoops reads llvm-objdump -d output and returns, for each symbol
// with a loop, the histogram of its hot loop: of the loops (a backward
// branch and the instructions from its target to it) the one with the
// most MFMAs, the innermost of equals. A kernel's main loop is where its
// time goes, so that is what a static estimate should count.
func parseLoops(text string) map[string]Histogram {
	type symbol struct {
		base int64
		code []instr
	}
	syms := map[string]*symbol{}
	var cur *symbol
	for _, raw := range strings.Split(text, "\n") {
		line := strings.TrimSpace(raw)
		if name, ok := symbolHeader(line); ok {
			base, _ := strconv.ParseInt(strings.Fields(line)[0], 16, 64)
			cur = &symbol{base: base}
			syms[name] = cur
			continue
		}
		if cur == nil || line == "" || raw[0] != ' ' && raw[0] != '\t' {
			continue
		}
		code, comment, _ := strings.Cut(line, "//")
		f := strings.Fields(code)
		a, _, ok := strings.Cut(strings.TrimSpace(comment), ":")
		addr, err := strconv.ParseInt(a, 16, 64)
		if len(f) == 0 || !ok || err != nil {
			continue
		}
		in := instr{addr: addr, target: -1, op: f[0]}
		if i := strings.Index(comment, "<"); i >= 0 && strings.HasPrefix(f[0], "s_cbranch") || i >= 0 && f[0] == "s_branch" {
			if _, off, ok := strings.Cut(strings.TrimSuffix(comment[i+1:], ">"), "+0x"); ok {
				if o, err := strconv.ParseInt(off, 16, 64); err == nil {
					in.target = cur.base + o
				}
			}
		}
		cur.code = append(cur.code, in)
	}
	out := map[string]Histogram{}
	for name, s := range syms {
		best, found := Histogram{}, false
		for _, br := range s.code {
			if br.target < 0 || br.target > br.addr {
				continue
			}
			var h Histogram
			for _, in := range s.code {
				if in.addr >= br.target && in.addr <= br.addr {
					h.count(in.op)
				}
			}
			if !found || h.MFMA > best.MFMA || h.MFMA == best.MFMA && h.Total < best.Total {
				best, found = h, true
			}
		}
		if found {
			out[name] = best
		}
	}
	return out
}
