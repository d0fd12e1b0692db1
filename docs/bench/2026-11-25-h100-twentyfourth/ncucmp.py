"""cuDNN and FA2 (SDPA) once each at the causal 512 sweep points, for ncu."""
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
F = torch.nn.functional
for d, b, h in ((64, 32, 32), (128, 32, 16), (256, 32, 8)):
    q, k, v = (torch.randn(b, h, 512, d, device='cuda', dtype=torch.bfloat16) for _ in range(3))
    for be in (SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION):
        with sdpa_kernel(be):
            for _ in range(2):
                F.scaled_dot_product_attention(q, k, v, is_causal=True)
    torch.cuda.synchronize()
