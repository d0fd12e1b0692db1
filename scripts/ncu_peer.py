"""Run one SDPA backend a few times at one attention shape, for ncu.

    ncu -k regex:. -c 3 python3 scripts/ncu_peer.py --impl sdpa-cudnn \
        --batch 32 --heads 16 --seq 512 --dim 128 [--causal]

Inputs are random bf16 in BSHD storage passed as [B, H, S, D] views, as
peers.py times them; the launches are the ones a profiler should see (a
first call, then --launches more), nothing is timed here.
"""
import argparse

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = {"sdpa-flash": SDPBackend.FLASH_ATTENTION,
            "sdpa-cudnn": SDPBackend.CUDNN_ATTENTION,
            "sdpa-efficient": SDPBackend.EFFICIENT_ATTENTION}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--impl", default="sdpa-cudnn", choices=sorted(BACKENDS))
    for name, default in (("batch", 1), ("heads", 16), ("seq", 4096), ("dim", 128), ("launches", 2)):
        p.add_argument("--" + name, type=int, default=default)
    p.add_argument("--causal", action="store_true")
    a = p.parse_args()
    q, k, v = (torch.randn(a.batch, a.seq, a.heads, a.dim, dtype=torch.bfloat16,
                           device="cuda").transpose(1, 2) for _ in range(3))
    with sdpa_kernel([BACKENDS[a.impl]]):
        for _ in range(1 + a.launches):
            torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=a.causal)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
