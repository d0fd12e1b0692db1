import json, sys
# summ.py LABEL FILE...: the split path's time per MLA point
for lab, f in zip(sys.argv[1::2], sys.argv[2::2]):
    for l in open(f):
        x = json.loads(l); s = x['shape']
        if x['impl'] != 'tilego-split': continue
        print('b%-3d h%-3d kv%-5d %-4s n%d %8.1fus %6.1f TF %6.3f copy ok %s' % (s['batch'], s['heads'], s['mean_kv'], lab, s.get('splits',0), x['ms']*1000, x['tflops'], x['gbps']/3020, x['check']['ok']))
