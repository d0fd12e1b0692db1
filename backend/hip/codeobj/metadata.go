package codeobj

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
)

// parseMetadata reads the AMDGPU code object metadata as llvm-readelf
// --notes prints it (YAML, code object v3 and later; the keys are listed in
// LLVM's AMDGPUUsage, "Code Object V3 Metadata", kernel attributes table).
// It returns the target ID (amdhsa.target) and one Kernel per entry of
// amdhsa.kernels, in order.
//
// Only the keys this package reports are read; each kernel's own keys are
// told from its arguments' (.args entries have .name and .size too) by
// indentation.
func parseMetadata(text string) (target string, kernels []Kernel, err error) {
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var (
		sawKernels bool
		inKernels  bool
		listIndent = -1 // column of the "- " that opens each kernel
		keyIndent  = -1 // column of a kernel's own keys
		cur        *Kernel
		lineNo     int
	)
	for sc.Scan() {
		lineNo++
		raw := strings.TrimRight(sc.Text(), " \t\r")
		line := strings.TrimLeft(raw, " ")
		if line == "" {
			continue
		}
		indent := len(raw) - len(line)
		key, val, isKey := strings.Cut(line, ":")
		if isKey {
			key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		}
		switch {
		case isKey && key == "amdhsa.target":
			target = strings.Trim(val, `'"`)
			continue
		case isKey && key == "amdhsa.kernels":
			sawKernels, inKernels, listIndent, keyIndent = true, true, -1, -1
			continue
		}
		if !inKernels {
			continue
		}
		if strings.HasPrefix(line, "- ") && (listIndent < 0 || indent == listIndent) {
			// A new kernel; its first key follows the dash.
			listIndent = indent
			kernels = append(kernels, Kernel{})
			cur = &kernels[len(kernels)-1]
			rest := strings.TrimLeft(line[1:], " ")
			keyIndent = indent + len(line) - len(rest)
			line, indent = rest, keyIndent
			key, val, isKey = strings.Cut(line, ":")
			key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		} else if listIndent >= 0 && indent <= listIndent {
			// Back at (or before) the list's column without a dash: the
			// kernel list is over.
			inKernels = false
			continue
		} else if strings.HasPrefix(line, "- ") {
			continue // an entry of a nested list (.args)
		}
		if cur == nil || indent != keyIndent || !isKey || val == "" {
			continue // nested entries (.args), or a key opening a nested block
		}
		if err := cur.setMetadata(key, val); err != nil {
			return "", nil, fmt.Errorf("codeobj: metadata line %d: %w", lineNo, err)
		}
	}
	if err := sc.Err(); err != nil {
		return "", nil, fmt.Errorf("codeobj: metadata: %w", err)
	}
	if !sawKernels {
		return "", nil, fmt.Errorf("codeobj: no amdhsa.kernels in the code object metadata")
	}
	for i, k := range kernels {
		if k.Name == "" {
			return "", nil, fmt.Errorf("codeobj: metadata kernel %d has no .name", i)
		}
	}
	return target, kernels, nil
}

// setMetadata stores one kernel attribute; unknown keys are ignored.
func (k *Kernel) setMetadata(key, val string) error {
	var dst *int
	switch key {
	case ".name":
		k.Name = strings.Trim(val, `'"`)
		return nil
	case ".vgpr_count":
		dst = &k.VGPRs
	case ".agpr_count":
		dst = &k.AGPRs
	case ".sgpr_count":
		dst = &k.SGPRs
	case ".vgpr_spill_count":
		dst = &k.VGPRSpills
	case ".sgpr_spill_count":
		dst = &k.SGPRSpills
	case ".group_segment_fixed_size":
		dst = &k.LDSBytes
	case ".private_segment_fixed_size":
		dst = &k.ScratchBytes
	case ".max_flat_workgroup_size":
		dst = &k.MaxWorkgroupSize
	case ".wavefront_size":
		dst = &k.WavefrontSize
	default:
		return nil
	}
	n, err := strconv.Atoi(val)
	if err != nil {
		return fmt.Errorf("%s: %q is not an integer", key, val)
	}
	*dst = n
	return nil
}
