"""heapcheck.py - checks a capture of a tests/dotnet program against what
the program says its heap holds (`Heap --expect`), for dotnet_test.py.

A capture is a .gclog (records: a section, t types, o objects with their
references, r roots) and its .gens.json (generation ranges, static field
names). check() returns the list of what does not match; empty is a pass.
"""
import json
from collections import Counter, defaultdict


class Dump:
    def __init__(self, path):
        self.types, self.size, self.type_of, self.refs = {}, {}, {}, {}
        self.roots, self.sections = [], []
        with open(path, encoding="utf-8") as f:
            for line in f:
                self._record(line.rstrip("\n"))
        self.fields = defaultdict(list)
        self.ranges = []
        try:
            with open(path + ".gens.json", encoding="utf-8") as f:
                side = json.load(f)
        except FileNotFoundError:
            side = {}
        for s in side.get("statics", []):
            self.fields[int(s["object"], 16)].append(s["field"])
        self.ranges = side.get("ranges", [])

    def _record(self, line):
        kind, _, rest = line.partition(" ")
        if kind == "a":
            self.sections.append(rest.split(" ", 1)[1].rsplit(" ", 1)[0])
        elif kind == "t":
            tid, _, name = rest.partition(" ")
            self.types[int(tid, 16)] = name
        elif kind == "o":
            f = rest.split(" ")
            obj = int(f[0], 16)
            self.type_of[obj] = int(f[1], 16)
            self.size[obj] = int(f[2], 16)
            self.refs[obj] = [int(x, 16) for x in f[3:]]
        elif kind == "r":
            f = rest.split(" ")
            self.roots.append((int(f[0], 16), int(f[1]), int(f[2], 16),
                               int(f[3], 16) if len(f) > 3 else 0))

    def name(self, obj):
        return self.types.get(self.type_of.get(obj), "?")

    def objects_of(self, type_name):
        return [o for o in self.type_of if self.name(o) == type_name]


def check_types(d, want, problems):
    counts = Counter(d.name(o) for o in d.type_of)
    for name, n in want["types"].items():
        if counts[name] != n:
            problems.append(f"type {name}: {counts[name]} objects, want {n}")


def check_refs(d, want, problems):
    for r in want["refs"]:
        incoming = Counter()
        for o in d.objects_of(r["from"]):
            to = {x for x in d.refs[o] if d.name(x) == r["to"]}
            incoming.update(to)
            if len(to) != r["out"]:
                problems.append(f"{r['from']} {o:x}: {len(to)} references to {r['to']}, "
                                f"want {r['out']}")
                break
        bad = [o for o in d.objects_of(r["to"]) if incoming[o] != r["in"]]
        if bad:
            problems.append(f"{r['to']} {bad[0]:x}: referenced by {incoming[bad[0]]} "
                            f"{r['from']}, want {r['in']}")


def check_roots(d, want, problems):
    for w in want["roots"]:
        hits = [r for r in d.roots if r[1] == w["kind"]
                and r[2] & w["flags"] == w["flags"] and not r[2] & w["not_flags"]
                and d.name(r[0]) == w["type"] and d.size.get(r[0], 0) >= w.get("min_size", 0)]
        objects = {r[0] for r in hits}
        if len(objects) < w.get("count", 1):
            problems.append(f"root '{w['what']}': {len(objects)} {w['type']} objects, "
                            f"want {w.get('count', 1)}")
        if "field" in w and not any(w["field"] in d.fields[o] for o in objects):
            problems.append(f"root '{w['what']}': no {w['type']} named by field {w['field']} "
                            f"(fields: {sorted({f for o in objects for f in d.fields[o]})})")


def check_cwt(d, want, problems):
    c = want["cwt"]
    pairs = sum(1 for k in d.objects_of(c["key"])
                if any(d.name(x) == c["value"] for x in d.refs[k]))
    if pairs != c["count"]:
        problems.append(f"{pairs} {c['key']} objects reference their {c['value']}, "
                        f"want {c['count']}")


def check_dangling(d, problems):
    dangling = sum(1 for refs in d.refs.values() for x in refs if x not in d.type_of)
    if dangling:
        problems.append(f"{dangling} references to objects that are not in the dump")
    untyped = sum(1 for t in d.type_of.values() if t not in d.types)
    if untyped:
        problems.append(f"{untyped} objects of types that are not in the dump")


def check(path, want):
    d = Dump(path)
    problems = []
    if len(d.sections) != 1 or not d.sections[0].startswith(want["program"] + " (.NET "):
        problems.append(f"sections {d.sections}, want one named '{want['program']} (.NET ...)'")
    check_types(d, want, problems)
    check_refs(d, want, problems)
    check_roots(d, want, problems)
    check_cwt(d, want, problems)
    check_dangling(d, problems)
    if not {r["generation"] for r in d.ranges} >= {0, 1, 2, 3}:
        problems.append(f"generation ranges {sorted({r['generation'] for r in d.ranges})}")
    return problems
