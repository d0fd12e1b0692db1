"""K and V loaded L2 evict-last (kvel) in the d256 causal 512 programs: the pairs walk (p) and the walk drawing its tiles in head order (h)."""
def kvel(t):
    ls = t.split('\n')
    idx = [i for i, l in enumerate(ls) if 'mbar_arrive_expect_tx(' in l][1:3]  # K, then V (the first is Q)
    for i in idx:
        j = i + 1
        while 'tma_load_4d(' in ls[j]:
            ls[j] = ls[j].replace('tl::tma_load_4d(', 'tl::tma_load_4d_hint(').replace(');', ', tl::l2_evict_last());'); j += 1
        assert j > i + 1
    return '\n'.join(ls)
for tag in 'ph':
    open('%s-kvel.cu' % tag, 'w').write(kvel(open('%s-base.cu' % tag).read()))
