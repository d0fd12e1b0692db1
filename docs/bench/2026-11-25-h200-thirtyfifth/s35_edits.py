#!/usr/bin/env python3
"""Call 5's hand edits of the Early programs: run in bin/src35 after
`tilego emit mla-decode --heads 128 --splits 2 --step 1|2 --target sm_90a --config "m=64 stages=2 threads=256
splitn ws roles handoff early"` wrote split_early.cu and comb_early.cu there."""


def ticket(s):
    i = s.index('if (tid == 0) { __threadfence();')
    line = s[i:s.index('\n', i)]
    ptr = line[line.index('atomicAdd(&') + len('atomicAdd(&'):line.index(', 1); __threadfence(); }')]
    dst = line[line.index('__threadfence(); ') + len('__threadfence(); '):line.index(' = atomicAdd')]
    acq = ('if (tid == 0) { int v; asm volatile("atom.add.acq_rel.gpu.global.s32 %0, [%1], 1;" : "=r"(v) : "l"(&'
           + ptr + ') : "memory"); ' + dst + ' = v; }')
    return line, ptr, acq


s = open('split_early.cu').read()
open('split_nolaunch.cu', 'w').write(s.replace("  tl::grid_launch_next(); // the next kernel may start early (NextEarly)\n", ""))
line, ptr, acq = ticket(s)
open('split_acqrel.cu', 'w').write(s.replace(line, acq))
i = s.index("    if ((!(req_splits[(0)] == 1))) {")
j = s.index("    }\n", i) + 6
red = ('    if ((!(req_splits[(0)] == 1))) {\n      tl::bar_sync(1, 256);\n'
       '      if (tid == 128) asm volatile("red.release.gpu.global.add.s32 [%0], 1;" :: "l"(&' + ptr + ') : "memory");\n    }\n')
open('split_red.cu', 'w').write(s[:i] + red + s[j:])
c = open('comb_early.cu').read()
line, _, acq = ticket(c)
open('comb_acqrel.cu', 'w').write(c.replace(line, acq))
open('comb_restrict.cu', 'w').write(c.replace(
    'mla_combine(const int* num_splits, const uint16_t* O_partial, const float* LSE_partial',
    'mla_combine(const int* __restrict__ num_splits, const uint16_t* __restrict__ O_partial, const float* __restrict__ LSE_partial', 1))
