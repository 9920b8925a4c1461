#!/usr/bin/env python3
"""Checks a timeline written by `cuemu run --timeline` for `cli_probe streams`: valid trace-event JSON, every
driver call and stream item present with its track, `after` starting only after `spin` ended (the event wait)
with a dependency arrow between them, and each item's submission arrow starting inside the call that submitted
it. Usage: timeline_check.py FILE; exits 1 naming the first failed check."""
import json
import sys


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


events = json.load(open(sys.argv[1]))["traceEvents"]
names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e.get("ph") == "M" and e["name"] == "thread_name"}
slices = [e for e in events if e.get("ph") == "X"]
calls = [e for e in slices if e["cat"] == "api"]
items = [e for e in slices if e["cat"] == "stream"]
for e in slices:
    if not isinstance(e["ts"], (int, float)) or e["dur"] < 0:
        fail(f"bad time in {e}")
    if (e["pid"], e["tid"]) not in names:
        fail(f"slice on an unnamed track: {e}")
for name in ("cuInit", "cuLaunchKernel", "cuEventRecord", "cuStreamWaitEvent", "cuMemcpyDtoHAsync_v2",
             "cuStreamSynchronize", "cuCtxDestroy_v2"):
    if not any(c["name"] == name for c in calls):
        fail(f"no driver call {name}")
by_name = {}
for i in items:
    by_name.setdefault(i["name"], []).append(i)
for name in ("spin", "after", "cuMemcpyDtoHAsync_v2"):
    if name not in by_name:
        fail(f"no stream item {name}; items: {sorted(by_name)}")
spin, after, copy = by_name["spin"][0], by_name["after"][0], by_name["cuMemcpyDtoHAsync_v2"][0]
if spin["tid"] == after["tid"]:
    fail("spin and after are on one track; they ran on two streams")
if after["tid"] != copy["tid"]:
    fail("the copy is not on after's stream")
if after["ts"] < spin["ts"] + spin["dur"]:
    fail(f"after starts at {after['ts']} before spin ends at {spin['ts'] + spin['dur']}")
if copy["ts"] < after["ts"] + after["dur"]:
    fail("the copy starts before after ends (stream order)")
flows = {}
for e in events:
    if e.get("ph") in ("s", "f"):
        flows.setdefault((e["cat"], e["id"]), {})[e["ph"]] = e
dependency = [f for (cat, _), f in flows.items() if cat == "dependency" and "s" in f and "f" in f]
if not any(f["s"]["tid"] == spin["tid"] and f["f"]["tid"] == after["tid"] for f in dependency):
    fail("no dependency arrow from spin's stream to after's")
submits = [f for (cat, _), f in flows.items() if cat == "submit"]
if len(submits) != len(items):
    fail(f"{len(submits)} submission arrows for {len(items)} stream items")
for f in submits:
    s = f["s"]
    if not any(c["tid"] == s["tid"] and c["ts"] <= s["ts"] <= c["ts"] + c["dur"] for c in calls):
        fail(f"a submission arrow starts outside every driver call: {s}")
print(f"ok: {len(calls)} driver calls, {len(items)} stream items, {len(dependency)} dependency arrows")
