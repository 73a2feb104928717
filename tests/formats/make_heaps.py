#!/usr/bin/env python3
"""make_heaps.py - small hand-made heap files whose records are known exactly.

  make_heaps.py hprof OUT [IDSIZE [EXTRA]]   an HPROF 1.0.2 dump (4- or 8-byte
                                     IDs), its array EXTRA elements longer
  make_heaps.py android OUT          the same as Android writes it (1.0.3, 4-byte
                                     IDs, its own sub-records added)
  make_heaps.py hprof2 OUT           two dumps of that heap in one file
  make_heaps.py v8 OUT               a V8 heap snapshot
  make_heaps.py chrome OUT           the same as Chromium writes it

Each prints the summary it must give, as JSON, on stdout; the fuzz seeds
are made from the same functions (tests/fuzz/make-seeds.py)."""
import json
import struct
import sys


def hprof(idsize=8, extra=0, android=False, dumps=1):
    """java.lang.Object <- Node (fields: next:Object, v:int); Holder with a
    static Node[] field; a cycle of two Nodes in the array (and extra more
    elements naming the first); an int[]; one root of each kind. Android's
    adds a heap's name, a char[] without its values, rooted as an interned
    string, each of its other roots, and an object named unreachable. With
    dumps=2 the same heap is dumped twice, as the JDK's hprof agent does: a
    HEAP DUMP record, then the segments."""
    fid = (lambda v: struct.pack('>I', v)) if idsize == 4 else (lambda v: struct.pack('>Q', v))
    version = b'1.0.3' if android else b'1.0.2'
    out = [b'JAVA PROFILE ' + version + b'\0', struct.pack('>IQ', idsize, 0)]

    def rec(tag, body):
        out.append(struct.pack('>BII', tag, 0, len(body)) + body)

    names = {1: b'java/lang/Object', 2: b'Node', 3: b'Holder', 4: b'[LNode;', 5: b'next',
             6: b'v', 7: b'KEEP', 8: b'java/lang/Class', 9: b'app'}
    for sid, text in names.items():
        rec(0x01, fid(sid) + text)
    classes = {0x100: 1, 0x200: 2, 0x300: 3, 0x400: 4, 0x500: 8}
    for cid, sid in classes.items():
        rec(0x02, struct.pack('>I', 1) + fid(cid) + struct.pack('>I', 0) + fid(sid))

    def class_dump(cid, sup, inst_size, statics, fields):
        b = fid(cid) + struct.pack('>I', 0) + fid(sup) + fid(0) * 5 + struct.pack('>I', inst_size)
        b += struct.pack('>H', 0) + struct.pack('>H', len(statics))
        for name, t, val in statics:
            b += fid(name) + bytes([t]) + (fid(val) if t == 2 else struct.pack('>i', val))
        b += struct.pack('>H', len(fields))
        for name, t in fields:
            b += fid(name) + bytes([t])
        return b'\x20' + b

    def instance(oid, cid, nxt, v):
        data = fid(nxt) + struct.pack('>i', v)
        return b'\x21' + fid(oid) + struct.pack('>I', 0) + fid(cid) + struct.pack('>I', len(data)) + data

    parts = [
        instance(0x2200, 0x200, 0, 3),       # before its class: read at the end
        class_dump(0x500, 0x100, 0, [], []),
        class_dump(0x100, 0, 0, [], []),
        class_dump(0x200, 0x100, idsize + 4, [], [(5, 2), (6, 10)]),
        class_dump(0x300, 0x100, 0, [(7, 2, 0x1000), (6, 10, 5)], []),
        class_dump(0x400, 0x100, 0, [], []),
        b'\x22' + fid(0x1000) + struct.pack('>II', 0, 3 + extra) + fid(0x400) + fid(0x2000) + fid(0) +
        fid(0x2100) + fid(0x2000) * extra,
        instance(0x2000, 0x200, 0x2100, 1),
        instance(0x2100, 0x200, 0x2000, 2),
        b'\x23' + fid(0x3000) + struct.pack('>II', 0, 4) + b'\x0a' + b'\0' * 16,
        b'\xff' + fid(0x2200),                                   # unknown
        b'\x01' + fid(0x3000) + fid(0x9),                        # JNI global
        b'\x02' + fid(0x2200) + struct.pack('>II', 1, 0),        # JNI local
        b'\x03' + fid(0x2200) + struct.pack('>II', 1, 0),        # Java frame
        b'\x04' + fid(0x2200) + struct.pack('>I', 1),            # native stack
        b'\x05' + fid(0x300),                                    # sticky class
        b'\x06' + fid(0x2200) + struct.pack('>I', 1),            # thread block
        b'\x07' + fid(0x2200),                                   # monitor used
        b'\x08' + fid(0x2200) + struct.pack('>II', 1, 0),        # thread object
    ]
    if android:
        parts[6:6] = [
            b'\xfe' + struct.pack('>I', ord('A')) + fid(9),          # heap dump info: app
            b'\xc3' + fid(0x3100) + struct.pack('>II', 0, 8) + b'\x05',  # char[8], no data
            b'\x89' + fid(0x3100),                                   # interned string
            b'\x8a' + fid(0x2200),                                   # finalizing
            b'\x8b' + fid(0x2200),                                   # debugger
            b'\x8c' + fid(0x2200),                                   # reference cleanup
            b'\x8d' + fid(0x2200),                                   # VM internal
            b'\x8e' + fid(0x2200) + struct.pack('>II', 1, 0),        # JNI monitor
            b'\x90' + fid(0x2100),                                   # unreachable: no root
        ]
    if dumps == 2:
        rec(0x0c, b''.join(parts))
    rec(0x1c, b''.join(parts[:6]))      # two segments, split between records
    rec(0x1c, b''.join(parts[6:]))
    rec(0x2c, b'')
    node = 2 * idsize + idsize + 4
    align = lambda n: (n + 7) & ~7
    # classes (Holder with its static fields), the array, the nodes, int[4]
    sizes = [align(2 * idsize)] * 4 + [align(2 * idsize + idsize + 4)] + \
        [align(2 * idsize + 4 + (3 + extra) * idsize)] + [align(node)] * 3 + [align(2 * idsize + 4 + 16)]
    # references: four classes to their superclass, the array's two, the cycle
    expect = {"objects": 10, "bytes": sum(sizes), "references": 4 + 2 + extra + 2,
              "roots": 10, "roots_by_kind": {"internal": 3, "local": 4, "finalizer": 0,
                                             "handle": 1, "static": 1, "runtime": 1},
              "unreachable": 3,   # class objects no root holds: Node, Node[], Class
              "types": {"Node": 3, "java.lang.Class": 5, "Node[]": 1, "int[]": 1}}
    if android:
        expect["objects"] += 1
        expect["bytes"] += align(2 * idsize + 4 + 16)
        expect["roots"] += 6
        for kind, n in (("internal", 4), ("finalizer", 1), ("runtime", 1)):
            expect["roots_by_kind"][kind] += n
        expect["types"]["char[]"] = 1
    if dumps == 2:
        for k in ("objects", "bytes", "references", "roots", "unreachable"):
            expect[k] *= 2
        for d in (expect["roots_by_kind"], expect["types"]):
            for k in d:
                d[k] *= 2
    return b''.join(out), expect


def v8(chrome=False, node=False):
    """(root) -> (GC roots) -> (Global handles) -> global -> Map -> 3 Widgets;
    (GC roots) -> (Stack roots) -> one Widget; a weak edge Map -> a string.
    As Node writes it (node): the root also links the global by a shortcut
    edge, holds the synthetic "Node / Environment" (a size of its own)
    holding a native object, and the synthetic "C++ roots" (size 0)
    holding an object; a Widget links another by a shortcut edge, which is
    no reference; the global holds a WeakMap's table and a key of it: the
    table links the key and the value weakly, and the value again by an
    internal edge, which is no reference, as the key's is.
    As Chromium writes it (chrome): with the field detachedness, and native
    nodes no root reaches: a detached <div> holding Text T1, Text T2 through
    a hidden edge, Text T4 and an object Holder that holds Text X; an
    attached <div> holding Text T3 and T4; a <div> of unknown state. As
    DevTools passes the state on, only T1 becomes detached (T2 is behind a
    hidden edge, T4 attached first, X behind an object). One Widget is
    marked detached too, which DevTools ignores for objects."""
    strings = ["", "(GC roots)", "(Global handles)", "(Stack roots)", "global", "Map",
               "Widget", "hello", "weak", "k", "<div>", "Text", "Holder"]
    # type: 0 hidden 1 array 2 string 3 object 9 synthetic
    nodes = [  # type, name, id, size, edges
        (9, 0, 1, 0, 1), (9, 1, 3, 0, 2), (9, 2, 5, 0, 1), (9, 3, 7, 0, 1),
        (3, 4, 9, 40, 1), (3, 5, 11, 32, 4), (3, 6, 13, 24, 0), (3, 6, 15, 24, 1),
        (3, 6, 17, 24, 0), (2, 7, 19, 16, 0)]
    fields = ["type", "name", "id", "self_size", "edge_count"]
    if chrome:
        fields.append("detachedness")
        nodes = [n + (2 if n[2] == 17 else 0,) for n in nodes]
        nodes += [(8, 10, 21, 50, 4, 2), (8, 10, 23, 50, 2, 1), (8, 10, 25, 50, 0, 0),
                  (8, 11, 27, 20, 0, 0), (8, 11, 29, 20, 0, 0), (8, 11, 31, 20, 0, 0),
                  (8, 11, 33, 20, 0, 0), (3, 12, 35, 30, 1, 0), (8, 11, 37, 20, 0, 0)]
    nf = len(fields)
    edges = [(1, 1, 1), (1, 1, 2), (1, 2, 3), (1, 1, 4), (1, 1, 6),   # root, GC roots, cats
             (2, 9, 5),                                               # global.k -> Map
             (1, 0, 6), (1, 1, 7), (1, 2, 8), (6, 8, 9),              # Map -> widgets, weak
             (2, 9, 6)]                                               # widget 15 -> widget 13
    if node:
        strings += ["Node / Environment", "Node / IsolateData", "C++ roots", "Pinned", "Key", "Val"]
        nodes[0] = (9, 0, 1, 0, 4)
        nodes[4] = (3, 4, 9, 40, 3)
        nodes[7] = (3, 6, 15, 24, 2)
        nodes += [(9, 13, 41, 100, 1), (8, 14, 43, 60, 0), (9, 15, 45, 0, 1), (3, 16, 47, 8, 0),
                  (1, 0, 49, 32, 3), (3, 17, 51, 16, 1), (3, 18, 53, 24, 0)]
        edges[1:1] = [(5, 4, 4), (1, 2, 10), (1, 3, 12)]              # root: global, Node's
        at = edges.index((2, 9, 5)) + 1
        edges[at:at] = [(2, 9, 14), (2, 9, 15)]                       # global -> table, key
        at = edges.index((2, 9, 6)) + 1
        edges[at:at] = [(5, 4, 8)]                                    # widget 15 -> 17: shortcut
        edges += [(3, 14, 11), (1, 0, 13),                            # Environment, C++ roots
                  (6, 1, 15), (6, 2, 16), (3, 0, 16),                 # table: key, value
                  (3, 0, 16)]                                         # key -> value
    if chrome:
        edges += [(1, 0, 13), (4, 1, 14), (2, 9, 17), (1, 2, 16),    # detached div
                  (1, 0, 15), (1, 1, 16),                             # attached div
                  (2, 9, 18)]                                         # Holder -> X
    meta = {"node_fields": fields,
            "node_types": [["hidden", "array", "string", "object", "code", "closure", "regexp",
                            "number", "native", "synthetic", "concatenated string",
                            "sliced string", "symbol", "bigint"], "string", "number", "number",
                           "number"],
            "edge_fields": ["type", "name_or_index", "to_node"],
            "edge_types": [["context", "element", "property", "internal", "hidden", "shortcut",
                            "weak"], "string_or_number", "node"]}
    doc = {"snapshot": {"meta": meta, "node_count": len(nodes), "edge_count": len(edges)},
           "nodes": [v for n in nodes for v in n],
           "edges": [v for e in edges for v in (e[0], e[1], e[2] * nf)],
           "strings": strings}
    expect = {"objects": 6, "bytes": 160, "references": 5, "roots": 3,
              "roots_by_kind": {"internal": 0, "local": 1, "finalizer": 0, "handle": 2,
                                "static": 0, "runtime": 0},
              "roots_by_flag": {"none": 2, "pinned": 0, "weak": 1, "interior": 0, "other": 0},
              "unreachable": 1,
              "types": {"Widget": 3, "global": 1, "Map": 1, "(string)": 1}}
    if node:
        expect.update(objects=12, bytes=400, references=9, roots=8)
        expect["roots_by_kind"].update(internal=3, handle=4)
        expect["roots_by_flag"].update(none=5, weak=3)
        expect["types"].update({"Node / Environment": 1, "Node / IsolateData": 1, "Pinned": 1,
                                "(array)": 1, "Key": 1, "Val": 1})
    if chrome:
        expect.update(objects=15, bytes=440, references=12, unreachable=10)
        expect["types"].update({"Detached <div>": 1, "<div>": 2, "Detached Text": 1, "Text": 4,
                                "Holder": 1})
    return json.dumps(doc).encode(), expect


if __name__ == '__main__':
    kind, path = sys.argv[1], sys.argv[2]
    args = [int(a) for a in sys.argv[3:]]
    if kind == 'hprof':
        data, expect = hprof(*args)
    elif kind == 'android':
        data, expect = hprof(4, 0, True)
    elif kind == 'hprof2':
        data, expect = hprof(8, 0, False, 2)
    else:
        data, expect = v8(kind == 'chrome', kind == 'node')
    with open(path, 'wb') as f:
        f.write(data)
    print(json.dumps(expect))
