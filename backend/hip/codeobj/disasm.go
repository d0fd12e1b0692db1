package codeobj

import (
	"bufio"
	"fmt"
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
