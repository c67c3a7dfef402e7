"""The rule "fetch when the app's last open is an hour old, and hourly while
it stays unopened", speaking the external protocol by hand (standard library
only; docs/external-protocol.md). Usage: external:cmd=python3 docs/examples/stale_after.py"""
import json, sys
AGE = float(sys.argv[1]) if len(sys.argv) > 1 else 3600.0
last = {}
out = sys.stdout
for line in sys.stdin.buffer:
    m = json.loads(line)
    t = m["type"]
    if t == "decide":  # at the window's start and at the times asked for
        a, now = m["app"], m["now"]
        if "opens" in m:  # the app's opens since its last decision
            last[a] = m["opens"][-1]
        if now >= last[a] + AGE:
            out.write('{"fetch":true,"next":%r}\n' % (now + AGE))
        else:
            out.write('{"fetch":false,"next":%r}\n' % max(last[a] + AGE, now + 1.0))
        out.flush()
    elif t == "device":
        tr = m["training"]["opens"]
        last = {a: (tr[a][-1] if tr[a] else float("-inf")) for a in m["apps"]}
    elif t == "hello":  # version 3: asked at no open and no fetch end, told of opens only
        out.write('{"version":3,"ask":[],"tell":["opens"]}\n'); out.flush()
