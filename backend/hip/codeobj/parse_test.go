package codeobj

import (
	"strings"
	"testing"
)

func TestParseMetadata(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		target  string
		kernels []Kernel // Name and the integer fields only
		err     string
	}{
		{
			// An argument's .name and .size must not be taken for the
			// kernel's; amdhsa.version after the list ends it.
			name: "args and trailing keys",
			text: `AMDGPU Metadata:
---
amdhsa.kernels:
  - .agpr_count:     4
    .args:
      - .name:           in
        .offset:         0
        .size:           8
        .value_kind:     global_buffer
    .group_segment_fixed_size: 1024
    .max_flat_workgroup_size: 256
    .name:           k
    .private_segment_fixed_size: 16
    .sgpr_count:     14
    .sgpr_spill_count: 1
    .vgpr_count:     12
    .vgpr_spill_count: 2
    .wavefront_size: 64
  - .name: 'second'
    .vgpr_count: 3
amdhsa.target:   amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-
amdhsa.version:
  - 1
  - 2
...
`,
			target: "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-",
			kernels: []Kernel{
				{Name: "k", VGPRs: 12, AGPRs: 4, SGPRs: 14, VGPRSpills: 2, SGPRSpills: 1, LDSBytes: 1024, ScratchBytes: 16, MaxWorkgroupSize: 256, WavefrontSize: 64},
				{Name: "second", VGPRs: 3},
			},
		},
		{
			// YAML may put a list's dashes in its key's column, and the
			// whole document may be indented.
			name: "dash in the key's column",
			text: `    amdhsa.kernels:
    - .name: a
      .args:
      - .name: arg
        .size: 4
      - .vgpr_count: 99
      .vgpr_count: 7
    - .vgpr_count: 9
      .name: b
    amdhsa.target: amdgcn-amd-amdhsa--gfx90a
`,
			target:  "amdgcn-amd-amdhsa--gfx90a",
			kernels: []Kernel{{Name: "a", VGPRs: 7}, {Name: "b", VGPRs: 9}},
		},
		{
			name:   "no kernels",
			text:   "amdhsa.kernels: []\namdhsa.target: amdgcn-amd-amdhsa--gfx942\n",
			target: "amdgcn-amd-amdhsa--gfx942",
		},
		{name: "no metadata", text: "Displaying notes found in: .note\n", err: "no amdhsa.kernels"},
		{name: "bad number", text: "amdhsa.kernels:\n  - .name: k\n    .vgpr_count: many\n", err: `.vgpr_count: "many" is not an integer`},
		{name: "nameless kernel", text: "amdhsa.kernels:\n  - .vgpr_count: 1\n", err: "has no .name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target, kernels, err := parseMetadata(tt.text)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if target != tt.target {
				t.Errorf("target %q, want %q", target, tt.target)
			}
			if len(kernels) != len(tt.kernels) {
				t.Fatalf("kernels %+v, want %+v", kernels, tt.kernels)
			}
			for i, k := range kernels {
				if k != tt.kernels[i] {
					t.Errorf("kernel %d:\n got %+v\nwant %+v", i, k, tt.kernels[i])
				}
			}
		})
	}
}

func TestParseDisassembly(t *testing.T) {
	text := `
k.hsaco:	file format elf64-amdgpu

Disassembly of section .text:

0000000000001900 <k>:
	s_load_dwordx4 s[4:7], s[0:1], 0x0                         // 000000001900: C00A0100 00000000
	global_load_dwordx4 v[0:3], v4, s[4:5]
	buffer_load_dword v5, off, s[8:11], 0
	ds_read2_b32 v[6:7], v8 offset1:1
	ds_read_b128 v[0:3], v8
	ds_write_b64 v8, v[0:1]
	ds_bpermute_b32 v1, v2, v3
	s_waitcnt vmcnt(0) lgkmcnt(0)
	s_barrier
	v_mfma_f32_32x32x8_f16 a[0:15], v[0:1], v[2:3], a[0:15]
	v_smfmac_f32_16x16x32_f16 v[0:3], v[4:5], v[6:9], v10
	scratch_store_dword off, v0, off offset:4 ; 4-byte Folded Spill
	scratch_load_dword v0, off, off offset:4
	buffer_store_dword v5, off, s[8:11], 0
	global_store_dword v4, v0, s[6:7]
	s_nop 6
	s_endpgm
	s_nop 0
	s_nop 0
	s_code_end

0000000000001a00 <helper>:
	s_setpc_b64 s[30:31]
...
0000000000001b00 <empty>:
`
	syms, err := parseDisassembly(text)
	if err != nil {
		t.Fatal(err)
	}
	if len(syms) != 3 || len(syms["helper"]) != 1 || len(syms["empty"]) != 0 {
		t.Fatalf("symbols %v", syms)
	}
	got := histogram(syms["k"])
	want := Histogram{
		Total: 17, MFMA: 2, LDSRead: 2, LDSWrite: 1,
		GlobalLoad: 1, GlobalStore: 1, BufferLoad: 1, BufferStore: 1,
		ScratchLoad: 1, ScratchStore: 1, Waitcnt: 1, Barrier: 1,
	}
	if got != want {
		t.Errorf("histogram\n got %+v\nwant %+v", got, want)
	}

	if _, err := parseDisassembly("k.hsaco:\tfile format elf64-amdgpu\n"); err == nil {
		t.Error("no error for a listing without symbols")
	}
}

func TestParseReportMissingKernel(t *testing.T) {
	notes := "amdhsa.kernels:\n  - .name: k\n"
	disasm := "0000000000001900 <other>:\n\ts_endpgm\n"
	if _, err := ParseReport(notes, disasm); err == nil || !strings.Contains(err.Error(), "kernel k is not in the disassembly") {
		t.Errorf("error %v", err)
	}
}

func TestArchOf(t *testing.T) {
	for target, arch := range map[string]string{
		"amdgcn-amd-amdhsa--gfx942":                 "gfx942",
		"amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-": "gfx90a",
		"gfx950": "gfx950",
		"":       "",
	} {
		if got := archOf(target); got != arch {
			t.Errorf("archOf(%q) = %q, want %q", target, got, arch)
		}
	}
}
