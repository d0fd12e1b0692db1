#!/usr/bin/env python3
"""Hand edits for the twenty-fourth session's calls 1-2 (run in bin/abl,
beside b.cu, c.cu, e.cu, g.cu, h.cu: the emitted programs of s24c1.sh's
shapes and configs). Rewritten after the calls from the session's record
(the file itself was removed with bin/abl before it was copied here).
sk: in a causal tile of 128 rows over two consumer warpgroups with 64-key
steps, warpgroup 0 (rows 0-63) skips the Q·Kᵀ and P·V wgmmas of a step
whose keys all lie past its rows (the tile's last step); the barriers and
the softmax (on scores the mask sets to -inf) stay, so the protocol is
unchanged. slN: blocks 116 and up (the pairs walk's tail leaves them idle
at B32 H8 d256 causal 512 on 132 SMs) start N thousand cycles late.
wl: the same skip by the loop's bound (call 2)."""
import re
SKIP = '(tid < 128 && k1 * 64 > tile_m[(0)] * 128 + 63)'
def wrap(ls, start, what):
    f = next(i for i in range(start, len(ls)) if 'tl::wgmma_fence();' in ls[i])
    c = next(i for i in range(f, len(ls)) if 'tl::wgmma_commit();' in ls[i])
    assert 2 <= c - f <= 20, (what, f, c)
    ind = ls[f][:len(ls[f]) - len(ls[f].lstrip())]
    ls.insert(c + 1, ind + '}')
    ls.insert(f, ind + 'if (!' + SKIP + ') {')
def skip(t):
    ls = t.split('\n')
    turn = [i for i, l in enumerate(ls) if "this warpgroup's turn" in l]
    assert len(turn) == 1
    wrap(ls, turn[0], 'qk')
    late = [i for i, l in enumerate(ls) if 'const int k1_late = hi - 1;' in l]
    assert len(late) == 1
    wrap(ls, late[0], 'late pv')
    return '\n'.join(ls)
def slack(t, n, first):
    a = '  __syncthreads();\n  if (tid >= 256) {'
    assert t.count(a) == 1
    return t.replace(a, '  __syncthreads();\n  if (blockIdx.x >= %d) tl::spin_cycles(%d);\n  if (tid >= 256) {' % (first, n * 1000))
# wl: warpgroup 0 runs its steps to hiW (one fewer when the tile's last
# step lies past its rows), then takes that step's turn and releases its K
# and V stages without a wgmma.
def vempty_off(cons):
    m = re.search(r'mbar_arrive\(tl::smem_addr\(smem \+ (\d+)\) \+ 8 \* \(\(k1 - 1 - rb\) % 2\)\)', cons)
    return m.group(1)
def wl(t):
    head, cons = t.split('tl::setmaxnreg_inc<', 1)
    ls = cons.split('\n')
    def find(pred, start=0):
        return next(i for i in range(start, len(ls)) if pred(ls[i]))
    i = find(lambda l: 'const int lo = 0, hi = ' in l)
    j = find(lambda l: 'const int rb = lo - ring;' in l, i)
    ind = ls[j][:len(ls[j]) - len(ls[j].lstrip())]
    ls.insert(j + 1, ind + 'const int hiW = hi - ((tid < 128 && hi > lo + 1 && (hi - 1) * 64 > tile_m[(0)] * 128 + 63) ? 1 : 0);')
    f = find(lambda l: 'for (int k1 = lo; k1 < hi; ++k1) {' in l, j)
    ls[f] = ls[f].replace('k1 < hi;', 'k1 < hiW;')
    q = find(lambda l: 'if (k1 == hi - 1) {' in l, f)
    ls[q] = ls[q].replace('hi - 1', 'hiW - 1')
    kfull = ls[find(lambda l: 'tl::mbar_wait(' in l, f)].strip()
    late = find(lambda l: 'const int k1_late = hi - 1;' in l, q)
    ls[late] = ls[late].replace('hi - 1', 'hiW - 1')
    vfull = ls[find(lambda l: 'tl::mbar_wait(' in l, late)].strip()
    kempty = ls[find(lambda l: 'if (lane == 0) tl::mbar_arrive(' in l and '(k1 - rb)' in l, q)].strip()
    end = find(lambda l: 'if (hi > lo) {' in l, f) - 1
    while 'k0 == ' in ls[end] and 'bar_sync' in ls[end]:
        end -= 1
    ls[end + 1:end + 1] = [ind + 'if (hiW < hi) { // warpgroup 0: its turn at the step past its rows, and the K stage back',
                           ind + '  const int k1 = hi - 1;',
                           ind + '  ' + kfull,
                           ind + '  tl::bar_sync(2 + tid / 128, 256);',
                           ind + '  tl::bar_arrive(3 - tid / 128, 256);',
                           ind + '  __syncwarp();',
                           ind + '  ' + kempty,
                           ind + '}']
    v = find(lambda l: '8 * ((hi - 1 - rb) % 2));' in l and 'mbar_arrive' in l, late)
    ls[v] = ls[v].replace('(hi - 1 - rb)', '(hiW - 1 - rb)')
    vind = ls[v - 2][:len(ls[v - 2]) - len(ls[v - 2].lstrip())]
    ls[v + 2:v + 2] = [vind + 'if (hiW < hi) { // and the V stage of that step',
                       vind + '  const int k1 = hi - 1;',
                       vind + '  ' + vfull,
                       vind + '  __syncwarp();',
                       vind + '  ' + kempty.replace(kempty.split('smem + ')[1].split(')')[0], vempty_off(cons)),
                       vind + '}']
    return head + 'tl::setmaxnreg_inc<' + '\n'.join(ls)
for tag in 'bcegh':
    t = open(tag + '.cu').read()
    vs = {'base': t, 'sk': skip(t)}
    if tag == 'b':
        for n in (10, 20):
            vs['sl%d' % n] = slack(t, n, 116)
        vs['sksl20'] = slack(skip(t), 20, 116)
    if tag in 'bc':
        vs['wl'] = wl(t)
    for k, v in vs.items():
        open('%s-%s.cu' % (tag, k), 'w').write(v)
