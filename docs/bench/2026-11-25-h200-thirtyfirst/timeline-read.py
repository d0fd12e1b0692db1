# Reads the TL lines of a timeline run (timeline-edit.py): per block and piece, Q's wait, the page loop, the
# epilogue, in µs.  python3 timeline-read.py c6-tl2-batch64meankv8192.txt
import sys, collections
rows=[l.split() for l in open(sys.argv[1]) if l.startswith('TL ')]
rows=[(int(r[1]),int(r[2]),int(r[4]),int(r[5]),int(r[6]))+tuple(int(x) for x in r[7:13]) for r in rows]
T0=min(r[5] for r in rows)
blocks=collections.defaultdict(list)
for by,bx,k0,req,pages,t0,q,s0,pv0,loop,end in rows: blocks[(by,bx)].append((k0,req,pages,t0-T0,q-T0,loop-T0,end-T0))
ends=[max(p[6] for p in v) for v in blocks.values()]
print("blocks",len(blocks),"pieces",len(rows),"end max %.1f mean %.1f min %.1f us"%(max(ends)/1e3,sum(ends)/len(ends)/1e3,min(ends)/1e3))
q1=[];qn=[];ep=[];pp=[];tot=collections.Counter()
for v in blocks.values():
    v.sort(); prev=None
    for k0,req,pages,t0,q,loop,end in v:
        (q1 if prev is None else qn).append(q-(t0 if prev is None else prev)); ep.append(end-loop); pp.append((loop-q)/pages)
        prev=end
f=lambda a:"n %d min %.2f med %.2f max %.2f"%(len(a),min(a)/1e3,sorted(a)[len(a)//2]/1e3,max(a)/1e3)
print("first Q wait",f(q1)); print("later Q waits",f(qn)); print("loop per page (Q ready->last handback)/pages",f(pp)); print("epilogue",f(ep))
