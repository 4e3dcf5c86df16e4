# A json/re/dict-heavy workload for the real-program malloc test. Its output
# is deterministic (run with PYTHONHASHSEED=0), so the run on glibc and the
# run preloaded with libuslab.so must print the same lines.
import hashlib
import json
import re
import sys

def records(n):
    for i in range(n):
        yield {
            "id": i,
            "name": "user%05d" % i,
            "tags": ["t%d" % (i * j % 97) for j in range(i % 13)],
            "score": (i * 2654435761) % 100003 / 7.0,
            "nested": {"a": list(range(i % 17)), "b": {"c": str(i) * (i % 5)}},
        }

h = hashlib.sha256()
index = {}
text_parts = []
for rec in records(60000):
    s = json.dumps(rec, sort_keys=True)
    back = json.loads(s)
    assert back == rec
    h.update(s.encode())
    for t in back["tags"]:
        index.setdefault(t, []).append(back["id"])
    if rec["id"] % 10 == 0:
        text_parts.append("%s scored %.3f with tags %s" %
                          (rec["name"], rec["score"], ",".join(rec["tags"])))

text = "\n".join(text_parts)
pat = re.compile(r"user(\d+) scored (\d+)\.(\d+) with tags ((?:t\d+,?)*)")
matches = 0
digits = 0
for m in pat.finditer(text):
    matches += 1
    digits += sum(int(c) for c in m.group(1))
words = {}
for w in re.findall(r"[a-z]+\d*", text):
    words[w] = words.get(w, 0) + 1

# Growth and shrink of big containers, string building, sorting.
big = [str(i) * 3 for i in range(200000)]
big.sort(key=lambda s: (len(s), s[::-1]))
del big[::2]
blob = "".join(big[:50000])

print("records sha256", h.hexdigest())
print("tags", len(index), "largest", max(len(v) for v in index.values()))
print("matches", matches, "digits", digits, "words", len(words))
print("top words", sorted(words.items(), key=lambda kv: (-kv[1], kv[0]))[:5])
print("blob", len(blob), hashlib.md5(blob.encode()).hexdigest())
sys.exit(0)
