#!/usr/bin/env python3
"""Thirty-seventh session: stage Merge's partials in the dead page ring.

Reads the Merge split kernel that `tilego emit mla-decode ... --step 1
--target sm_90a --config 'merge=true early=false'` prints (h_q 128, s_q 1)
and writes a version in which the producer thread, after a merger's last
page, waits for the request's count and bulk-copies each partner's 64-row
bf16 partial (64 KB, contiguous) into the next free ring slot, rows 1040
bytes apart (conflict-free 4-byte reads); the consumers wait on the slot's
full barrier, read the partial from shared memory and free the slot.
usage: s37_stage.py in.cu out.cu
"""
import sys

src = open(sys.argv[1]).read()

def sub(old, new, count=1):
    global src
    n = src.count(old)
    assert n == count, (n, old[:80])
    src = src.replace(old, new)

PART = "(long long)(req[(0)]) * (65536 * splits) + (long long)((k2 + 1)) * 65536 + (long long)(((bx * 64) / 128)) * 65536 + (long long)((((bx * 64) % 128) + {i})) * 512 + (long long)({c})"

# Producer: after the merger's pages, its partners' partials into the ring.
sub("""        ring += max(0, hi - lo);
      }
    }
    return;""", """        ring += max(0, hi - lo);
        if (split[(0)] == 0 && req_splits[(0)] != 1) {
          tl::wait_count(&merge_count[(long long)(req[(0)]) * (1 * count_cols) + (long long)(bx)], req_splits[(0)] - 1);
          asm volatile("fence.proxy.async.global;" ::: "memory");
          for (int j = 1; j < req_splits[(0)]; ++j) {
            const int qq = ring + j - 1;
            tl::mbar_wait(tl::smem_addr(smem + 229904) + 8 * (qq % 2), ((qq / 2) & 1) ^ 1);
            tl::mbar_wait(tl::smem_addr(smem + 229968) + 8 * (qq % 2), ((qq / 2) & 1) ^ 1);
            const uint32_t bar = tl::smem_addr(smem + 229888) + 8 * (qq % 2);
            tl::mbar_arrive_expect_tx(bar, 65536);
            const uint16_t* psrc = O_partial + (long long)(req[(0)]) * (65536 * splits) + (long long)j * 65536 + (long long)(((bx * 64) / 128)) * 65536 + (long long)(((bx * 64) % 128)) * 512;
            const uint32_t dst = tl::smem_addr(smem + 73728 + (qq % 2) * 73728);
            for (int r = 0; r < 64; ++r)
              asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 1024, [%2];" ::"r"(dst + r * 1040), "l"(psrc + r * 512), "r"(bar) : "memory");
          }
          ring += req_splits[(0)] - 1;
        }
      }
    }
    return;""")

# Consumers: the producer waited for the count; wait for the first partial.
sub("""      if (tid == 0) tl::wait_count(&merge_count[(long long)(req[(0)]) * (1 * count_cols) + (long long)(bx)], (num_splits[(long long)(req[(0)])] - 1));
      tl::bar_sync(1, 256);""", """      tl::mbar_wait(tl::smem_addr(smem + 229888) + 8 * (ring % 2), (ring / 2) & 1);""")
sub("""      for (int k2 = 0; k2 < (num_splits[(long long)(req[(0)])] - 1); ++k2) {
""", """      for (int k2 = 0; k2 < (num_splits[(long long)(req[(0)])] - 1); ++k2) {
        const int qq = ring + k2;
        tl::mbar_wait(tl::smem_addr(smem + 229888) + 8 * (qq % 2), (qq / 2) & 1);
        const unsigned char* const pst = smem + 73728 + (qq % 2) * 73728;
""")
for i, c in (("i15", "i16"), ("i17", "(i18 + 256)")):
    sub("O_partial[" + PART.format(i=i, c=c) + "]",
        "*(const uint16_t*)(pst + (%s) * 1040 + (%s) * 2)" % (i, c))
# The slot back to the producer after the split's multiply-adds, and the
# ring past the staged partials after the loop.
sub("""          }
        }
        tl::bar_sync(1, 256);
      }
      if (tid / 128 == 0) {""", """          }
        }
        tl::bar_sync(1, 256);
        __syncwarp();
        if (lane == 0) {
          if ((1 >> (tid / 128)) & 1) tl::mbar_arrive(tl::smem_addr(smem + 229904) + 8 * (qq % 2));
          tl::mbar_arrive(tl::smem_addr(smem + 229968) + 8 * (qq % 2));
        }
      }
      ring += num_splits[(long long)(req[(0)])] - 1;
      if (tid / 128 == 0) {""")
open(sys.argv[2], "w").write(src)
