package codeobj

import "testing"

// The expected values follow from Limits' rules by hand: VGPRs round up to
// 8 and share 512 per SIMD, SGPRs round up to 16 and share 800, at most 8
// waves per SIMD and 4 SIMDs per CU, whole workgroups only.
func TestOccupancy(t *testing.T) {
	tests := []struct {
		name                          string
		arch                          string
		vgprs, sgprs, lds, dynLDS, wg int
		vgprWaves, sgprWaves          int
		ldsWGs, wgs, waves            int
		limiter                       string
	}{
		// 16 waves per workgroup: 2 workgroups fill the 32 slots.
		{"small kernel, 1024 threads", "gfx942", 6, 14, 1024, 0, 1024, 8, 8, 64, 2, 8, ""},
		{"one-wave workgroups", "gfx942", 64, 14, 0, 0, 64, 8, 8, 0, 32, 8, ""},
		// 128 VGPRs: 512/128 = 4 waves per SIMD, 16 per CU = 4 workgroups of 4.
		{"128 VGPRs", "gfx942", 128, 14, 0, 0, 256, 4, 8, 0, 4, 4, LimitVGPR},
		// 129 rounds up to 136: 512/136 = 3.
		{"129 VGPRs", "gfx942", 129, 14, 0, 0, 256, 3, 8, 0, 3, 3, LimitVGPR},
		// 72 VGPRs allow 7 waves per SIMD (28 per CU) but a 16-wave
		// workgroup fits only once: 4 waves per SIMD.
		{"72 VGPRs, 1024 threads", "gfx942", 72, 14, 0, 0, 1024, 7, 8, 0, 1, 4, LimitVGPR},
		{"512 VGPRs", "gfx942", 512, 14, 0, 0, 64, 1, 8, 0, 4, 1, LimitVGPR},
		// 100 SGPRs round up to 112: 800/112 = 7.
		{"100 SGPRs", "gfx942", 8, 100, 0, 0, 64, 8, 7, 0, 28, 7, LimitSGPR},
		{"96 SGPRs", "gfx942", 8, 96, 0, 0, 64, 8, 8, 0, 32, 8, ""},
		{"40 KiB LDS", "gfx942", 8, 16, 40960, 0, 256, 8, 8, 1, 1, 1, LimitLDS},
		{"16 KiB LDS", "gfx942", 8, 16, 16384, 0, 256, 8, 8, 4, 4, 4, LimitLDS},
		{"LDS over the CU's", "gfx942", 8, 16, 65537, 0, 256, 8, 8, 0, 0, 0, LimitLDS},
		// Static and dynamic LDS add up: 32 KiB, two workgroups.
		{"dynamic LDS", "gfx942", 8, 16, 1024, 31744, 256, 8, 8, 2, 2, 2, LimitLDS},
		{"40 KiB LDS on gfx950", "gfx950", 8, 16, 40960, 0, 256, 8, 8, 4, 4, 4, LimitLDS},
		// 3-wave workgroups: 10 fit in 32 slots, 30 waves, 8 on the fullest SIMD.
		{"192 threads", "gfx942", 8, 16, 0, 0, 192, 8, 8, 0, 10, 8, LimitWorkgroup},
		{"65 threads are 2 waves", "gfx942", 8, 16, 0, 0, 65, 8, 8, 0, 16, 8, ""},
		{"unknown target", "gfx1100", 8, 16, 0, 0, 256, 0, 0, 0, 0, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := Kernel{VGPRs: tt.vgprs, SGPRs: tt.sgprs, LDSBytes: tt.lds, WavefrontSize: 64}
			k.limits, k.known = LimitsFor(tt.arch)
			o := k.OccupancyAt(tt.wg, tt.dynLDS)
			if o.VGPRWaves != tt.vgprWaves || o.SGPRWaves != tt.sgprWaves || o.LDSWorkgroups != tt.ldsWGs ||
				o.WorkgroupsPerCU != tt.wgs || o.WavesPerSIMD != tt.waves || o.Limiter != tt.limiter {
				t.Errorf("got %+v\nwant VGPR waves %d, SGPR waves %d, LDS workgroups %d, workgroups %d, waves/SIMD %d, limiter %q",
					o, tt.vgprWaves, tt.sgprWaves, tt.ldsWGs, tt.wgs, tt.waves, tt.limiter)
			}
			if o.WavesPerCU != o.WorkgroupsPerCU*o.WavesPerWorkgroup {
				t.Errorf("waves per CU %d, want %d", o.WavesPerCU, o.WorkgroupsPerCU*o.WavesPerWorkgroup)
			}
		})
	}
}
