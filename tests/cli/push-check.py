#!/usr/bin/env python3
# Reads what `protoc --decode` prints for a pprof Profile or an OTLP
# ExportProfilesServiceRequest (tests/cli/run-push.sh) and prints, from
# either, the same independent views, so the two can be compared:
#   stacks-pprof|stacks-otlp FILE  "TYPE/UNIT<TAB>root;...;leaf<TAB>VALUE",
#                                  merged and sorted
#   totals-pprof FILE              "TYPE/UNIT TOTAL"
#   types-pprof FILE               "sample_type T/U ..." and "period_type T/U"
#   buildids-pprof|buildids-otlp   "FILE BUILD-ID" of each mapping with one
#   locations-pprof FILE           a line per location of a mapping with a
#                                  build-id: "ADDR FILE BUILD-ID START OFFSET
#                                  HAS_FUNCTIONS NAME;NAME..." (hex numbers;
#                                  names innermost first, "-" for none)
#   leaves-pprof FILE              each sample's leaf: "FILE BUILD-ID
#                                  OFFSET NAME root;...;leaf VALUE", OFFSET
#                                  the leaf's in its file (hex: address -
#                                  memory_start + file_offset), "-" for
#                                  what is missing
#   labels-pprof|labels-otlp FILE  each sample's labels / attributes,
#                                  sorted (the first Profile's samples)
#   resource-otlp FILE             "key=value" of the resource attributes
#                                  (ints as "key=int:N")
#   dict-otlp FILE                 "ok" if every dictionary table starts
#                                  with its zero entry, as the schema says
import codecs, sys
from collections import defaultdict


def parse(path):
    """protoc's text format -> nested dicts of lists."""
    root = defaultdict(list)
    stack = [root]
    for raw in open(path, encoding="utf-8", errors="replace"):
        line = raw.strip()
        if not line:
            continue
        if line == "}":
            stack.pop()
            continue
        if line.endswith("{"):
            d = defaultdict(list)
            stack[-1][line[:-1].strip()].append(d)
            stack.append(d)
            continue
        key, _, val = line.partition(":")
        val = val.strip()
        if val.startswith('"'):
            val = codecs.escape_decode(val[1:-1].encode())[0].decode("utf-8", "replace")
        else:
            try:
                val = int(val)
            except ValueError:
                pass
        stack[-1][key.strip()].append(val)
    return root


def one(d, k, default=0):
    v = d.get(k)
    return v[0] if v else default


def pprof_stacks(p):
    strs = p["string_table"]
    s = lambda i: strs[i] if 0 <= i < len(strs) else "?"
    funcs = {one(f, "id"): s(one(f, "name")) for f in p["function"]}
    # A mapping with a build-id that says it has no functions: its lines
    # are placeholders ("[dash]"), not names, and OTLP carries such a
    # frame as its address -- so does this view.
    unnamed = {one(mp, "id") for mp in p["mapping"]
               if one(mp, "build_id") and one(mp, "has_functions") not in (1, "true")}
    locs = {}
    for l in p["location"]:
        frames = [funcs.get(one(ln, "function_id"), "?") for ln in l["line"]]
        if one(l, "mapping_id") in unnamed:
            frames = []
        locs[one(l, "id")] = frames or ["0x%x" % one(l, "address")]
    types = ["%s/%s" % (s(one(t, "type")), s(one(t, "unit"))) for t in p["sample_type"]]
    out = defaultdict(int)
    for smp in p["sample"]:
        frames = []
        for lid in smp["location_id"]:
            frames += locs[lid]
        stack = ";".join(reversed(frames))
        for t, v in zip(types, smp["value"]):
            out[(t, stack)] += v
    return out


def pprof_labels(p):
    strs = p["string_table"]
    out = []
    for smp in p["sample"]:
        ls = []
        for lb in smp["label"]:
            v = strs[one(lb, "str")] if one(lb, "str") else "%d%s" % (
                one(lb, "num"), strs[one(lb, "num_unit")])
            ls.append("%s=%s" % (strs[one(lb, "key")], v))
        out.append(",".join(sorted(ls)))
    return sorted(out)


def otlp_labels(r):
    d = r["dictionary"][0]
    strs = d["string_table"]
    attrs = d["attribute_table"]
    pr = r["resource_profiles"][0]["scope_profiles"][0]["profiles"][0]
    out = []
    for smp in pr["samples"]:
        ls = []
        for ai in smp["attribute_indices"]:
            a = attrs[ai]
            v = one(a, "value", {})
            if "string_value" in v:
                val = one(v, "string_value")
            else:
                val = "%d%s" % (one(v, "int_value"), strs[one(a, "unit_strindex")])
            ls.append("%s=%s" % (strs[one(a, "key_strindex")], val))
        out.append(",".join(sorted(ls)))
    return sorted(out)


def otlp_stacks(r):
    d = r["dictionary"][0]
    strs = d["string_table"]
    s = lambda i: strs[i] if 0 <= i < len(strs) else "?"
    funcs = [s(one(f, "name_strindex")) for f in d["function_table"]]
    locs = []
    for l in d["location_table"]:
        frames = [funcs[one(ln, "function_index")] for ln in l["lines"]]
        locs.append(frames or ["0x%x" % one(l, "address")])
    stacks = [[f for li in st["location_indices"] for f in locs[li]]
              for st in d["stack_table"]]
    out = defaultdict(int)
    for rp in r["resource_profiles"]:
        for sp in rp["scope_profiles"]:
            for pr in sp["profiles"]:
                vt = one(pr, "sample_type", {})
                t = "%s/%s" % (s(one(vt, "type_strindex")), s(one(vt, "unit_strindex")))
                for smp in pr["samples"]:
                    stack = ";".join(reversed(stacks[one(smp, "stack_index")]))
                    for v in smp["values"]:
                        out[(t, stack)] += v
    return out


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    m = parse(path)
    if cmd in ("stacks-pprof", "stacks-otlp"):
        st = pprof_stacks(m) if cmd == "stacks-pprof" else otlp_stacks(m)
        for (t, stack), v in sorted(st.items()):
            if v:
                print("%s\t%s\t%d" % (t, stack, v))
    elif cmd == "types-pprof":
        # "sample_type T/U ..." then "period_type T/U"
        strs = m["string_table"]
        s = lambda i: strs[i] if 0 <= i < len(strs) else "?"
        print("sample_type " + " ".join("%s/%s" % (s(one(t, "type")), s(one(t, "unit")))
                                        for t in m["sample_type"]))
        pt = m["period_type"]
        print("period_type " + ("%s/%s" % (s(one(pt[0], "type")), s(one(pt[0], "unit")))
                                if pt else "none"))
    elif cmd == "labels-pprof":
        print("\n".join(pprof_labels(m)))
    elif cmd == "labels-otlp":
        print("\n".join(otlp_labels(m)))
        print("attributes=%d" % len(m["dictionary"][0]["attribute_table"]),
              file=sys.stderr)
    elif cmd == "totals-pprof":
        tot = defaultdict(int)
        for (t, _), v in pprof_stacks(m).items():
            tot[t] += v
        for t in sorted(tot):
            print(t, tot[t])
    elif cmd == "buildids-pprof":
        strs = m["string_table"]
        for mp in m["mapping"]:
            if one(mp, "build_id"):
                print(strs[one(mp, "filename")], strs[one(mp, "build_id")])
    elif cmd == "locations-pprof":
        strs = m["string_table"]
        funcs = {one(f, "id"): strs[one(f, "name")] for f in m["function"]}
        maps = {one(mp, "id"): mp for mp in m["mapping"]}
        for l in m["location"]:
            mp = maps.get(one(l, "mapping_id"))
            if not mp or not one(mp, "build_id"):
                continue
            names = [funcs.get(one(ln, "function_id"), "?") for ln in l["line"]]
            print("%x %s %s %x %x %d %s" % (
                one(l, "address"), strs[one(mp, "filename")],
                strs[one(mp, "build_id")], one(mp, "memory_start"),
                one(mp, "file_offset"),
                1 if one(mp, "has_functions") in (1, "true") else 0,
                ";".join(names) or "-"))
    elif cmd == "leaves-pprof":
        strs = m["string_table"]
        s = lambda i: strs[i] if 0 <= i < len(strs) else "?"
        maps = {one(mp, "id"): mp for mp in m["mapping"]}
        locs = {one(l, "id"): l for l in m["location"]}
        funcs = {one(f, "id"): s(one(f, "name")) for f in m["function"]}
        for smp in m["sample"]:
            ids = smp["location_id"]
            if not ids:
                continue
            leaf = locs[ids[0]]
            mp = maps.get(one(leaf, "mapping_id"))
            lines = leaf["line"]
            name = funcs.get(one(lines[0], "function_id"), "-") if lines else "-"
            frames = []
            for lid in ids:
                l = locs[lid]
                frames += [funcs.get(one(ln, "function_id"), "?") for ln in l["line"]] or \
                          ["0x%x" % one(l, "address")]
            if mp:
                off = "%x" % (one(leaf, "address") - one(mp, "memory_start") +
                              one(mp, "file_offset"))
                print(s(one(mp, "filename")), s(one(mp, "build_id")) or "-", off,
                      name, ";".join(reversed(frames)), one(smp, "value"))
            else:
                print("-", "-", "-", name, ";".join(reversed(frames)), one(smp, "value"))
    elif cmd == "buildids-otlp":
        d = m["dictionary"][0]
        strs = d["string_table"]
        attrs = d["attribute_table"]
        for mp in d["mapping_table"]:
            for ai in mp["attribute_indices"]:
                a = attrs[ai]
                if strs[one(a, "key_strindex")] == "process.executable.build_id.gnu":
                    print(strs[one(mp, "filename_strindex")],
                          one(one(a, "value", {}), "string_value", ""))
    elif cmd == "resource-otlp":
        for rp in m["resource_profiles"]:
            for kv in one(rp, "resource", {}).get("attributes", []):
                v = one(kv, "value", {})
                if "int_value" in v:
                    print("%s=int:%d" % (one(kv, "key"), one(v, "int_value")))
                else:
                    print("%s=%s" % (one(kv, "key"), one(v, "string_value", "")))
    elif cmd == "dict-otlp":
        d = m["dictionary"][0]
        ok = one(d, "string_table", None) == ""
        for t in ("mapping_table", "location_table", "function_table",
                  "attribute_table", "stack_table", "link_table"):
            first = d[t][0] if d[t] else None
            if first is None:
                ok = False
            elif t == "link_table":
                ok &= one(first, "trace_id", None) == "\0" * 16 and \
                      one(first, "span_id", None) == "\0" * 8
            elif any(first.values()):
                ok = False
        print("ok" if ok else "bad")


main()
