# sequential_views.py — the Taxation (T1) and Immigration (T2) views of Adult used by
# bench_sequential.sh ([Wang06] §6): T1 has the continuous attributes, the Taxation
# categoricals, the common attributes and the class; T2 the common attributes,
# race and native-country. Keys k1, k2 identify the records of each view.
import csv, sys, random
# prep.py SRC OUTDIR SCALE: T1 (Taxation) and T2 (Immigration) views of adult, [Wang06] §6;
# SCALE > 1 adds SCALE-1 variations per record (q random X attributes redrawn, [Wang06] §6.1)
src, out, scale = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = list(csv.reader(open(src, newline=''), delimiter=';'))
head = [h.lower() for h in rows[0]]; rows = [r for r in rows[1:] if len(r) == len(head)]
ix = {h: i for i, h in enumerate(head)}
t1c = ['age','fnlwgt','education-num','capital-gain','capital-loss','hours-per-week','education','occupation','workclass','marital-status','relationship','sex','salary']
t2c = ['marital-status','relationship','sex','race','native-country']
cat1 = ['education','occupation','workclass','marital-status','relationship','sex']
dom = {c: sorted(set(r[ix[c]] for r in rows)) for c in head}
rng = random.Random(1)
w1 = csv.writer(open(out + '/t1.csv', 'w', newline=''), delimiter=';')
w2 = csv.writer(open(out + '/t2.csv', 'w', newline=''), delimiter=';')
w1.writerow(['k1'] + t1c); w2.writerow(['k2'] + t2c)
k = 0
for r in rows:
    for v in range(scale):
        rr = list(r)
        if v:
            for c in rng.sample(cat1 + ['race', 'native-country'], 2):
                rr[ix[c]] = rng.choice(dom[c])
        w1.writerow([k] + [rr[ix[c]] for c in t1c]); w2.writerow([k] + [rr[ix[c]] for c in t2c]); k += 1
