import json, sys
o, c = sys.argv[1], sys.argv[2]
def load(f):
    r = {}
    try:
        for l in open(f):
            x = json.loads(l); s = x['shape']
            for t in x['tried']:
                if t.get('ms'): r[('d%d %d%s' % (s['dim'], s['seq_q'], 'c' if s.get('causal') else ''), json.dumps(t['config'], sort_keys=True))] = (t['ms'], t.get('regs'), t.get('local_bytes'))
    except FileNotFoundError: pass
    return r
A = [load('%s/%s-A%d.jsonl' % (o, c, i)) for i in (1, 2, 3)]; B = [load('%s/%s-B%d.jsonl' % (o, c, i)) for i in (1, 2, 3)]
A = [x for x in A if x]; B = [x for x in B if x]
best = {}
for k in sorted(set(A[0]) & set(B[0])):
    a = min(x[k][0] for x in A if k in x); b = min(x[k][0] for x in B if k in x)
    print('%s %.4f -> %.4f  B/A speed %.3f  %s  regs/local B %s/%s' % (k[0], a, b, a / b, k[1], B[0][k][1], B[0][k][2]))
    ba = best.setdefault(k[0], [1e9, 1e9]); ba[0] = min(ba[0], a); ba[1] = min(ba[1], b)
for p, (a, b) in sorted(best.items()): print('best %s: A %.4f B %.4f  %.3f' % (p, a, b, a / b))
