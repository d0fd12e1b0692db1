#!/usr/bin/env python3
"""Time torch SDPA's backward (flash = FlashAttention-2, cuDNN) at one
attention shape, to set beside `tilego run flash-attention-bwd` at the
same shape in the same device run.

    python3 scripts/bwd_peers.py --batch 1 --heads 16 --seq 4096 --dim 128 --causal

peers.py's fa-bwd runner at a shape of your choosing (BSHD bf16): only the
backward is timed, do_bench with the L2 flushed, FLOPs as tilego's registry
counts the backward, 2·B·H·S²·(3·D + 2·Dv), halved when causal. One JSON
line per backend.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--seq", type=int, default=4096)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--causal", action="store_true")
    a = ap.parse_args()
    import torch
    shape = peers.attn_shape(a.batch, a.heads, a.heads, a.seq, a.dim, a.causal)
    peers.run_bwd(torch, peers.Bench(torch), [shape])


if __name__ == "__main__":
    main()
