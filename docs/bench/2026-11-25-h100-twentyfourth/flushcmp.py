"""cuDNN (SDPA) at the causal 512 sweep points, timed as do_bench does
(256 MiB memset before every launch) and back to back (no flush)."""
import torch, statistics, triton.testing as tt
from torch.nn.attention import SDPBackend, sdpa_kernel
F = torch.nn.functional
for d, b, h in ((64, 32, 32), (128, 32, 16), (256, 32, 8)):
    q, k, v = (torch.randn(b, h, 512, d, device='cuda', dtype=torch.bfloat16) for _ in range(3))
    fl = 4 * b * h * 512 * 512 * d / 2
    for name, be in (('cudnn', SDPBackend.CUDNN_ATTENTION), ('flash', SDPBackend.FLASH_ATTENTION)):
        with sdpa_kernel(be):
            fn = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)
            fn(); torch.cuda.synchronize()
            flushed = tt.do_bench(fn, warmup=25, rep=100, return_mode='median')
            for _ in range(10): fn()
            ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(50)]
            for a, e in ev:
                a.record(); fn(); e.record()
            torch.cuda.synchronize()
            b2b = statistics.median(a.elapsed_time(e) for a, e in ev)
            print('d%d causal 512 %-6s flush %.4f ms %.1f TF | back-to-back %.4f ms %.1f TF' % (d, name, flushed, fl / flushed / 1e9, b2b, fl / b2b / 1e9), flush=True)
