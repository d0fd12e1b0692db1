#!/usr/bin/env python3
"""Ablations of an emitted walk: noq (the producer loads the query tile
only for the walk's first two tiles, then arrives without bytes), nostore
(the output's global or TMA stores never run), noepi (c: the staging
stores to shared memory skipped too). Usage: variants.py base.cu outdir tag"""
import re, sys, os
src, out, tag = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(src).read()
lines = text.split('\n')

def noq(ls):
    ls = list(ls)
    i = next(i for i, l in enumerate(ls) if 'mbar_arrive_expect_tx(' in l)
    var = None
    for j in range(i, -1, -1):
        m = re.search(r'for \(int (\w+) = ', ls[j])
        if m: var = m.group(1); break
    addr = re.search(r'mbar_arrive_expect_tx\((.*), \d+\);', ls[i]).group(1)
    j = i
    while ls[j].strip() != '}': j += 1
    # ls[i-1] is the opening ' {'
    assert ls[i-1].strip() == '{', ls[i-1]
    ls[i-1] = ls[i-1].replace('{', 'if (%s < 2) {' % var)
    ls[j] = ls[j] + ' else tl::mbar_arrive(%s);' % addr
    return ls

def nostore(ls, epi=False):
    t = '\n'.join(ls)
    n0 = t
    t = re.sub(r'if \(([^\n]*?)\) \*\(uint4\*\)\(gp', 'if (num_sms < 0) *(uint4*)(gp', t)
    t = t.replace('if (tid % 128 == 0) {\n      const int half', 'if (tid % 128 == 0 && num_sms < 0) {\n      const int half')
    if epi:
        t = re.sub(r'(\n\s*)(\*\(uint32_t\*\)\(\(smem \+ \d+\) \+ tl::swz)', r'\1if (num_sms < 0) \2', t)
    assert t != n0
    return t.split('\n')

vs = {'base': lines, 'noq': noq(lines), 'nostore': nostore(lines), 'noqstore': nostore(noq(lines))}
if 'tma_store' in text:
    vs['noepi'] = nostore(lines, True)
for k, v in vs.items():
    open(os.path.join(out, '%s-%s.cu' % (tag, k)), 'w').write('\n'.join(v))
    print(tag, k, sum(1 for a, b in zip(lines, v) if a != b), 'lines changed')
