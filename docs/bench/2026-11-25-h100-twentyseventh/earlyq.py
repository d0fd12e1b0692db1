#!/usr/bin/env python3
# Hand edit for a measurement (twenty-seventh session): warpgroup 0 frees Q's slot as soon as its last
# Q.K^T of a piece is done (each of its 4 warps arrives twice on the 8-arrival barrier; warpgroup 1 never
# reads Q under hand-offs), instead of both warpgroups after the piece's page loop.
import sys
s = open(sys.argv[1]).read()
arrive = 'if (lane == 0) tl::mbar_arrive(tl::smem_addr(smem + 229672) + 8 * ((k0 - 0) % 1));'
assert s.count(arrive) == 1
s = s.replace(arrive, 'if (hi <= lo && lane == 0) tl::mbar_arrive(tl::smem_addr(smem + 229672) + 8 * ((k0 - 0) % 1));')
score = '          tl::wgmma_wait<0>();\n          #pragma unroll\n          for (int r = 0; r < 32; ++r) asm volatile("" : "+f"(S[r])::"memory");\n'
assert s.count(score) == 1
s = s.replace(score, score + '          if (k1 == hi - 1) { __syncwarp(); if (lane == 0) { tl::mbar_arrive(tl::smem_addr(smem + 229672) + 8 * ((k0 - 0) % 1)); tl::mbar_arrive(tl::smem_addr(smem + 229672) + 8 * ((k0 - 0) % 1)); } }\n')
open(sys.argv[2], 'w').write(s)
