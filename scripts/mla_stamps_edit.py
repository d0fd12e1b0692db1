#!/usr/bin/env python3
"""Stamp MLA's programs for a timeline (tl::globaltimer() readings in tilego_stamps, read back through
TILEGO_STAMPS, backend/cuda/stamps.go; mla_stamps_read.py sums them up). The input is a generated program
as `tilego emit mla-decode --splits 0 --step N --target sm_90a` prints it (h_q 128, the default config):

- the split kernel (step 1, mla_decode): warpgroup 0's first thread stamps, per block (blockIdx.y *
  gridDim.x + blockIdx.x, at most 264), 50 values: its consumers' start and end, then per piece (at most
  8) six: start, Q there, page loop start, page loop end (the last hand-back), epilogue end, and the
  piece's page count; after those 264 * 50, the producer's first stamp per block.
- the combine (step 2, mla_combine): thread 0 of each block stamps its start and end, two values a
  block (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x.

    mla_stamps_edit.py generated.cu stamped.cu
"""
import sys

src = open(sys.argv[1]).read()


def find(anchor, start=0):
    """Where anchor is in src; a program of another shape or config has no such line: say which."""
    i = src.find(anchor, start)
    if i < 0:
        sys.exit(f"mla_stamps_edit.py: {sys.argv[1]} has no {anchor.strip()!r}: not the h_q 128 default program this edit knows")
    return i


def after(anchor, text, nth=0):
    """Insert text after the nth occurrence of anchor."""
    global src
    i = -1
    for _ in range(nth + 1):
        i = find(anchor, i + 1)
    i += len(anchor)
    src = src[:i] + text + src[i:]


def before_end(text):
    """Insert text before the kernel's closing brace (the file's last line)."""
    global src
    i = src.rstrip().rindex("\n}")
    src = src[:i + 1] + text + src[i + 1:]


def stamp(slot):
    return f"if (tid == 0 && k0 < 8) tilego_stamps[sb_ + 2 + k0 * 6 + {slot}] = tl::globaltimer();\n"


if "from mla_combine." in src.splitlines()[0]:
    after('#include "tilego.cuh"\n', "__device__ unsigned long long tilego_stamps[2 * 16 * 2 * 128];\n")
    after("const int bz = blockIdx.z;\n",
          "  const int sb_ = 2 * ((blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x);\n"
          "  if (tid == 0) tilego_stamps[sb_] = tl::globaltimer();\n")
    before_end("  __syncthreads();\n  if (tid == 0) tilego_stamps[sb_ + 1] = tl::globaltimer();\n")
else:
    after('#include "tilego.cuh"\n', "__device__ unsigned long long tilego_stamps[264 * 50 + 264];\n")
    after("    if (tid == 256) {\n",
          "      tilego_stamps[264 * 50 + blockIdx.y * gridDim.x + blockIdx.x] = tl::globaltimer();\n")
    after("tl::setmaxnreg_inc<232>();\n",
          "  const int sb_ = (blockIdx.y * gridDim.x + blockIdx.x) * 50;\n"
          "  if (tid == 0) tilego_stamps[sb_] = tl::globaltimer();\n")
    after("L[(0)] = (int)(cache_seqlens[(long long)(req[(0)])]);\n", "    " + stamp(0), nth=1)
    after("tl::mbar_wait(tl::smem_addr(smem + 229664) + 8 * ((k0 - 0) % 1), ((k0 - 0) / 1) & 1);\n", "    " + stamp(1))
    loop = "      for (int k1 = lo; k1 < hi; ++k1) {\n        tl::mbar_wait(tl::smem_addr(smem + 229632)"
    i = find(loop)
    src = src[:i] + "      " + stamp(2) + "      if (tid == 0 && k0 < 8) tilego_stamps[sb_ + 2 + k0 * 6 + 5] = hi - lo;\n" + src[i:]
    after("      tl::bar_sync(9, 256); // the last hand-back\n", "      " + stamp(3))
    end = "    tl::bar_sync(1, 256);\n  }\n}\n"
    i = src.rindex(end)
    src = (src[:i] + "    tl::bar_sync(1, 256);\n    " + stamp(4) + "  }\n"
           + "  if (tid == 0) tilego_stamps[sb_ + 1] = tl::globaltimer();\n}\n" + src[i + len(end):])
open(sys.argv[2], "w").write(src)
