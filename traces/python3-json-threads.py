# The python3 workload of traces/python3-json-threads.ustr: four threads
# build, serialize, parse and index documents; the main thread merges the
# results (objects made by one thread are freed by another).
import json, re, collections, textwrap
from concurrent.futures import ThreadPoolExecutor

words = [("w%05d" % ((i * 7919) % 20011)) * (1 + i % 5) for i in range(4000)]

def job(seed):
    docs = [{"id": i, "name": words[(i * seed) % len(words)],
             "tags": words[i % 97: i % 97 + (i % 13)],
             "nested": {"a": list(range(i % 40)), "b": str(i) * (i % 17)}}
            for i in range(500)]
    s = json.dumps(docs)
    back = json.loads(s)
    idx = collections.defaultdict(list)
    for d in back:
        for t in d["tags"]:
            idx[t[:4]].append(d["id"])
    return s, idx, re.findall(r"w\d{3}", s)

with ThreadPoolExecutor(4) as ex:
    results = list(ex.map(job, range(1, 5)))
merged = collections.Counter()
for s, idx, found in results:
    for k, v in idx.items():
        merged[k] += len(v)
text = textwrap.fill(" ".join(words[:2000]), width=71)
print(len(results), len(merged), sum(len(r[0]) for r in results), len(text))
