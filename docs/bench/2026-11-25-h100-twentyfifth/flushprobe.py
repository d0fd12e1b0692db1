#!/usr/bin/env python3
"""Does do_bench's flush charge a short memory-bound launch for write-backs
it did not cause? One kernel, a device-to-device copy, at sizes from 128
MiB to 2 GiB, timed three ways (median ms, GB/s counting bytes read and
written):
  l2     triton.testing.do_bench: a 256 MB memset before every launch,
         which leaves the L2 full of dirty lines;
  clean  the same memset, then a read of another 256 MB buffer (the dirty
         lines written back before the launch), events around the copy;
  rotate no flush: the launches alternate over copies of the buffers whose
         traffic between two uses of one copy is over twice the L2.
If l2 is slower than clean and rotate by about the L2's size in bytes at
the copy's rate, and clean matches rotate, the gap is the write-back."""
import statistics
import torch
import triton.testing

l2 = torch.cuda.get_device_properties(0).L2_cache_size
flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
other = torch.empty(256 << 20, dtype=torch.uint8, device="cuda").fill_(1)


def events(fn, before, n=60):
    ts = []
    for i in range(n):
        before(i)
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn(i)
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b))
    return statistics.median(ts[5:])


print("L2 %d MB" % (l2 >> 20))
for mb in (128, 256, 512, 1024, 2048):
    nbytes = mb << 20
    k = min(max(1 + (2 * l2 + 2 * nbytes - 1) // (2 * nbytes), 2), 16)
    bufs = [(torch.empty(nbytes, dtype=torch.uint8, device="cuda").fill_(7), torch.empty(nbytes, dtype=torch.uint8, device="cuda")) for _ in range(k)]
    cp = lambda i: bufs[i % k][1].copy_(bufs[i % k][0])
    r = {}
    r["l2"] = triton.testing.do_bench(lambda: cp(0), warmup=25, rep=100, return_mode="median")
    def clean(i):
        flush.zero_()
        other.sum(dtype=torch.int64)
    r["clean"] = events(lambda i: cp(0), clean)
    # rotate: back to back, no host wait between launches
    for i in range(2 * k):
        cp(i)
    torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(60)]
    for i, (a, b) in enumerate(ev):
        a.record()
        cp(i)
        b.record()
    torch.cuda.synchronize()
    r["rotate"] = statistics.median(a.elapsed_time(b) for a, b in ev[5:])
    print("copy %5d MiB (%2d copies): " % (mb, k) + "  ".join("%s %.4f ms %4.0f GB/s" % (m, t, 2 * nbytes / (t * 1e-3) / 1e9) for m, t in r.items()), flush=True)
    del bufs
    torch.cuda.empty_cache()
