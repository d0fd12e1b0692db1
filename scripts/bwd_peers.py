#!/usr/bin/env python3
"""Time torch SDPA's backward (flash = FlashAttention-2, cuDNN) at one
attention shape, to set beside `tilego run flash-attention-bwd` at the
same shape in the same device run.

    python3 scripts/bwd_peers.py --batch 1 --heads 16 --seq 4096 --dim 128 --causal

Only the backward is timed: one forward builds the graph, then
torch.autograd.grad(out, (q, k, v), dO, retain_graph=True) runs under
triton.testing.do_bench (the L2 flushed before each call, as
scripts/peers.py times the forward). FLOPs as tilego's registry counts the
backward: 2·B·H·S²·(3·D + 2·Dv), halved when causal (2.5 times the
forward's when D = Dv). One JSON line per backend.
"""

import argparse
import json

import torch
import torch.nn.functional as F
import triton.testing
from torch.nn.attention import SDPBackend, sdpa_kernel


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--seq", type=int, default=4096)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--causal", action="store_true")
    a = ap.parse_args()
    B, H, S, D = a.batch, a.heads, a.seq, a.dim
    flops = 2 * B * H * S * S * (3 * D + 2 * D) / (2 if a.causal else 1)
    shape = {"batch": B, "heads": H, "seq": S, "dim": D, "causal": a.causal}
    for name, be in (("sdpa-flash", SDPBackend.FLASH_ATTENTION), ("sdpa-cudnn", SDPBackend.CUDNN_ATTENTION)):
        rec = {"kernel": "flash-attention-bwd", "impl": name, "shape": shape}
        try:
            # BSHD storage as [B, H, S, D] views, as peers.py's forward.
            q, k, v = (torch.randn(B, S, H, D, dtype=torch.bfloat16, device="cuda").transpose(1, 2).requires_grad_()
                       for _ in range(3))
            with sdpa_kernel([be]):
                out = F.scaled_dot_product_attention(q, k, v, is_causal=a.causal)
                do = torch.randn_like(out)
                fn = lambda: torch.autograd.grad(out, (q, k, v), do, retain_graph=True)
                fn()
                torch.cuda.synchronize()
                ms = triton.testing.do_bench(fn, warmup=25, rep=100)
            rec["ms"] = ms
            rec["tflops"] = flops / ms / 1e9
        except Exception as e:  # a backend refused: say so, go on
            rec["error"] = str(e).splitlines()[0][:300]
        print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
