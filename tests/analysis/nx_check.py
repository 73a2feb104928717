#!/usr/bin/env python3
"""nx_check.py - gcsnap's dominators against networkx's immediate_dominators.

usage: nx_check.py GCSNAP WORK_DIR [--no-random] [--agent GCSNAP_AGENT] [DUMP...]

For random medium graphs written into WORK_DIR (unless --no-random), for
mock heaps of every reference shape (local, forward, random) when --agent
is given, and for each DUMP given (a heap file of another format is first
converted into WORK_DIR with `gcsnap convert`),
computes every object's retained size from networkx's dominator tree over a
virtual root joined to the strong roots, and compares it with what
`gcsnap dominators --json --top 0` reports. Exit 0 when all agree, 1 on the
first difference, 77 when networkx cannot be imported (never silently)."""
import json
import os
import random
import subprocess
import sys

try:
    import networkx as nx
except ImportError:
    print("networkx not importable by %s (Debian: python3-networkx)" % sys.executable)
    sys.exit(77)

WEAK = 2


def parse(path):
    """Objects (id -> size), edges and strong roots of the first section."""
    sizes, edges, roots = {}, [], []
    with open(path) as f:
        for line in f:
            p = line.split()
            if not p:
                continue
            if p[0] == "c":
                break
            if p[0] == "o":
                oid = int(p[1], 16)
                sizes[oid] = int(p[3], 16)
                edges.extend((oid, int(r, 16)) for r in p[4:])
            elif p[0] == "r" and not int(p[3], 16) & WEAK:
                roots.append(int(p[1], 16))
    return sizes, edges, roots


def expected(path):
    sizes, edges, roots = parse(path)
    g = nx.DiGraph()
    g.add_node("root")
    g.add_edges_from(edges)
    g.add_edges_from(("root", r) for r in roots)
    idom = nx.immediate_dominators(g, "root")
    children = {}
    for v, d in idom.items():
        if v != "root":
            children.setdefault(d, []).append(v)
    retained, order, stack = {}, [], ["root"]
    while stack:
        v = stack.pop()
        order.append(v)
        stack.extend(children.get(v, []))
    for v in reversed(order):
        retained[v] = (sizes.get(v, 0) if v != "root" else 0) + sum(retained[c] for c in children.get(v, []))
    return {v: r for v, r in retained.items() if v != "root" and v in sizes}, retained["root"]


def actual(gcsnap, path):
    out = subprocess.run([gcsnap, "dominators", "--json", "--top", "0", path],
                         check=True, capture_output=True, text=True).stdout
    s = json.loads(out)["sections"][0]
    return {int(o["id"], 16): o["retained"] for o in s["top_objects"]}, s["reachable_bytes"]


def check(gcsnap, path, work):
    if not path.endswith(".gclog"):
        text = os.path.join(work, os.path.basename(path) + ".gclog")
        subprocess.run([gcsnap, "convert", path, "-o", text], check=True)
        path = text
    want, want_total = expected(path)
    got, got_total = actual(gcsnap, path)
    if got_total != want_total:
        print("%s: reachable bytes %d, networkx %d" % (path, got_total, want_total))
        return False
    if got != want:
        diff = [(hex(k), got.get(k), want.get(k)) for k in set(got) | set(want) if got.get(k) != want.get(k)]
        print("%s: %d objects differ, e.g. %s" % (path, len(diff), diff[:5]))
        return False
    print("%s: %d reachable objects agree with networkx" % (path, len(want)))
    return True


def random_dump(path, seed, n):
    rnd = random.Random(seed)
    with open(path, "w") as f:
        f.write("a 2 random 0\nt 1 Node\n")
        for i in range(1, n + 1):
            refs = [rnd.randint(1, n) for _ in range(rnd.choice([0, 1, 1, 2, 3, 8]))]
            if rnd.random() < 0.3 and i < n:
                refs.append(i + 1)          # long chains
            f.write("o %x 1 %x%s\n" % (8 * i, rnd.randint(1, 200) * 8,
                                         "".join(" %x" % (8 * r) for r in refs)))
        for _ in range(rnd.randint(1, 6)):
            f.write("r %x 1 %x\n" % (8 * rnd.randint(1, n), rnd.choice([0, 0, 1, 2])))
        f.write("c random 0\n")


def main():
    gcsnap, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    ok = True
    dumps = sys.argv[3:]
    if dumps[:1] == ["--no-random"]:
        dumps = dumps[1:]
    else:
        for seed in range(12):
            path = os.path.join(work, "random-%d.gclog" % seed)
            random_dump(path, seed, 500 + 400 * seed)
            ok = check(gcsnap, path, work) and ok
    if dumps[:1] == ["--agent"]:
        # 30000 objects hold more than 65536 references: gcsnap works
        # them on two threads, as it does real heaps.
        for shape in ("local", "forward", "random"):
            path = os.path.join(work, "mock-%s.gclog" % shape)
            subprocess.run([dumps[1], "--source", "mock:objects=30000,degree=2.8,targets=" + shape,
                            "--clock", "0", "--out", path], check=True, stdout=subprocess.DEVNULL)
            ok = check(gcsnap, path, work) and ok
        dumps = dumps[2:]
    for path in dumps:
        ok = check(gcsnap, path, work) and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
