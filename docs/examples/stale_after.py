"""The rule "fetch when the app's last open is an hour old, and hourly while
it stays unopened", speaking the external protocol by hand (standard library
only; docs/external-protocol.md). Usage: external:cmd=python3 docs/examples/stale_after.py"""
import json, sys
AGE = float(sys.argv[1]) if len(sys.argv) > 1 else 3600.0
last = {}
out = sys.stdout
for line in sys.stdin:
    m = json.loads(line)
    t = m["type"]
    if t == "hello":
        out.write('{"version":1}\n'); out.flush()
    elif t == "device":
        tr = m["training"]["opens"]
        last = {a: (tr[a][-1] if tr[a] else float("-inf")) for a in m["apps"]}
    elif t == "decide":
        a, now, why = m["app"], m["now"], m["why"]
        if why == "open":
            last[a] = now
            r = '{"fetch":false,"next":%r}' % (now + AGE)
        elif why == "timer":
            r = '{"fetch":true,"next":%r}' % (now + AGE)
        elif why == "start":
            if now - last[a] >= AGE:
                r = '{"fetch":true,"next":%r}' % (now + AGE)
            else:
                r = '{"fetch":false,"next":%r}' % max(last[a] + AGE, now + 1.0)
        else:
            r = '{"fetch":false}'
        out.write(r + "\n"); out.flush()
