#!/usr/bin/env python3
"""Writes the trace conformance corpus (traces/): files both readers must agree on.

    python3 Tests/Conformance/make-corpus.py

Each file's first line is its verdict: `# expect: accept`, or
`# expect: refuse LINE FIELD` (the line and field of the error, counting
that comment as line 1). The Swift test (TraceConformanceTests) and the
pytest (python/tests/test_conformance.py) read every file of traces/ with
their reader and compare with it. Add a case here, rerun, commit both.
"""
from pathlib import Path

out = Path(__file__).resolve().parent / "traces"
out.mkdir(exist_ok=True)
H = "user,time,event,app,value\n"
cases = {}


def body(rows, zone="UTC", user="u1"):
    return f"{user},1767571200,begin,,{zone}\n" + "".join(r + "\n" for r in rows) + f"{user},1767657600,end,,\n"


def acc(name, text):
    cases[f"accept-{name}.csv"] = ("# expect: accept\n" + text).encode()


def ref(name, line, field, text):
    cases[f"refuse-{name}.csv"] = (f"# expect: refuse {line} {field}\n" + text).encode()


acc("basic", H + body([
    "u1,1767571200,network,,wifi", "u1,1767575012.5,open,news,35", "u1,1767576000,update,news,",
    "u1,1767580000,battery,,80.5", "u1,1767581000,charge_start,,", "u1,1767582000,charge_end,,",
    "u1,1767583000,wake,,2", "u1,1767584000,location,,enter:home", "u1,1767585000,location,,significant"]))
acc("iso-forms", H + "u1,2026-01-05T00:00:00Z,begin,,UTC\n" + "".join(f"u1,{t},open,news,1\n" for t in [
    "2026-01-05T08:00:00z", "2026-01-05t08:00:01Z", "2026-01-05 09:00:02+01:00", "2026-01-05T09:00:03+0100",
    "2026-01-05T09:00:04+01", "2026-01-05T08:00:05.25Z", "\"2026-01-05T08:00:06,5Z\"", "2026-01-05T08:01Z",
    "2026-01-05T03:02:07-05:00", "2026-01-05T22:03:08+14:00"]) + "u1,2026-01-06T00:00:00Z,end,,\n")
acc("decimal-forms", H + body([
    "u1,1.7675752e9,open,news,3.5e1", "u1,1767575200,open,news,.5", "u1,1767575300,open,news,5.",
    "u1,1767575400,open,news,+35", "u1,1767575500,open,news,0035", "u1,1767575600,open,news,1E1",
    "u1,1767575700,open,news,-0", "u1,1767575800,update,news,2e+3"]))
for z in ["UTC", "Z", "", "+05:30", "-14:00", "+14:00", "Europe/Berlin", "America/New_York", "Etc/GMT+5",
          "US/Pacific", "Asia/Kolkata", "GMT"]:
    name = z.replace("/", "_").replace("+", "plus").replace(":", "") or "empty"
    acc("zone-" + name, H + body(["u1,1767575012,open,news,35"], zone=z))
cases["accept-bom-comments.csv"] = b"\xef\xbb\xbf# expect: accept\n# converted\n" + (
    H + body(["u1,1767575012,open,news,35"])).encode()
acc("quoted", H + '"u,1",1767571200,begin,,UTC\n"u,1",1767575012,open,"a,b",35\n'
    '"u,1","1767575013",open,"say ""hi""",1\n"u,1",1767575014,open,"two\nlines",1\n"u,1",1767657600,end,,\n')
acc("blank-lines-two-users", H + "\n" + body(["u1,1767575012,open,news,35"]) + "\n"
    + body(["u2,1767575012,open,mail,5"], user="u2"))
acc("unicode-names", H + body(["u1,1767575012,open,Ünïcödé 应用,35", "u1,1767575013,location,,exit:büro"]))

# One bad row after the begin row: line 4 (the verdict, the header, begin).
for name, row, field in [
    ("hex-time", "u1,0x69594D00,open,news,35", "time"),
    ("hex-float-time", "u1,0x1.a5p30,open,news,35", "time"),
    ("hex-value", "u1,1767575012,open,news,0x10", "value"),
    ("inf-value", "u1,1767575012,open,news,inf", "value"),
    ("nan-value", "u1,1767575012,battery,,nan", "value"),
    ("huge-value", "u1,1767575012,update,news,1e400", "value"),
    ("space-value", "u1,1767575012,open,news, 35", "value"),
    ("grouped-value", "u1,1767575012,open,news,1_000", "value"),
    ("unit-value", "u1,1767575012,open,news,35s", "value"),
    ("empty-exponent", "u1,1767575012,open,news,3e", "value"),
    ("iso-no-zone", "u1,2026-01-05T08:00:00,open,news,35", "time"),
    ("iso-date-only", "u1,2026-01-05,open,news,35", "time"),
    ("iso-24h", "u1,2026-01-05T24:00:00Z,open,news,35", "time"),
    ("iso-leap-second", "u1,2026-01-05T23:59:60Z,open,news,35", "time"),
    ("iso-bad-date", "u1,2026-02-30T08:00:00Z,open,news,35", "time"),
    ("iso-week-date", "u1,2026-W02-1T08:00:00Z,open,news,35", "time"),
    ("iso-offset-15h", "u1,2026-01-05T08:00:00+15:00,open,news,35", "time"),
    ("iso-offset-seconds", "u1,2026-01-05T08:00:00+01:00:00,open,news,35", "time"),
    ("iso-basic-format", "u1,20260105T080000Z,open,news,35", "time"),
    ("milliseconds", "u1,1767575012000,open,news,35", "time"),
    ("before-1970", "u1,-5,open,news,35", "time"),
    ("unknown-event", "u1,1767575012,launch,news,35", "event"),
    ("open-without-app", "u1,1767575012,open,,35", "app"),
    ("open-without-duration", "u1,1767575012,open,news,", "value"),
    ("long-session", "u1,1767575012,open,news,86401", "value"),
    ("battery-101", "u1,1767575012,battery,,101", "value"),
    ("unknown-network", "u1,1767575012,network,,wlan", "value"),
    ("charge-value", "u1,1767575012,charge_start,,1", "value"),
    ("battery-app", "u1,1767575012,battery,news,50", "app"),
    ("significant-region", "u1,1767575012,location,,significant:home", "value"),
    ("region-quote", 'u1,1767575012,location,,"enter:a""b"', "value"),
    ("six-fields", "u1,1767575012,open,news,35,x", "-"),
    ("four-fields", "u1,1767575012,open,news", "-"),
    ("text-after-quote", 'u1,1767575012,open,"news"x,35', "app"),
    ("other-user-inside", "u2,1767575012,open,news,35", "user"),
    ("control-char-app", "u1,1767575012,open,ne\x01ws,35", "app"),
]:
    ref(name, 4, field, H + body([row]))
for name, z in [("UTCplus1", "UTC+1"), ("UTCminus3", "UTC-3"), ("GMTplus0530", "GMT+0530"),
                ("US_Pacific-New", "US/Pacific-New"), ("offset-no-colon", "+0530"), ("offset-15h", "+15:00"),
                ("lowercase-name", "europe/berlin"), ("trailing-space", "UTC "), ("utc-lowercase", "utc"),
                ("posix-tz", '"EST5EDT,M3.2.0,M11.1.0"')]:
    ref("zone-" + name, 3, "value", H + body(["u1,1767575012,open,news,35"], zone=z))
ref("unsorted", 5, "time", H + body(["u1,1767575012,open,news,35", "u1,1767575011,open,news,35"]))
ref("truncated", 4, "-", H + "u1,1767571200,begin,,UTC\nu1,1767575012,open,news,35\n")
ref("split-user", 6, "user", H + body(["u1,1767575012,open,news,35"]) + body([], user="u1"))
ref("end-with-value", 4, "value", H + "u1,1767571200,begin,,UTC\nu1,1767657600,end,,x\n")
ref("begin-with-app", 3, "app", H + "u1,1767571200,begin,news,UTC\nu1,1767657600,end,,\n")
ref("empty-user", 4, "user", H + body([",1767575012,open,news,35"]))
ref("row-after-end", 5, "event", H + body([]) + "u1,1767660000,open,news,1\n")
ref("unterminated-quote", 4, "-", H + 'u1,1767571200,begin,,UTC\nu1,1767575012,open,"news,35\n')
ref("wrong-header", 2, "-", "user,timestamp,event,app,value\n" + body([]))
ref("long-user", 3, "user", H + body([], user="u" * 257))
cases["accept-crlf-no-final-newline.csv"] = (
    "# expect: accept\n" + H + body(["u1,1767575012,open,news,35"])).replace("\n", "\r\n").encode()[:-2]
cases["refuse-cr-only.csv"] = b"# expect: refuse 2 -\n" + (H + body([])).replace("\n", "\r").encode()
cases["refuse-non-utf8-app.csv"] = (b"# expect: refuse 4 app\n" + H.encode()
                                    + b"u1,1767571200,begin,,UTC\nu1,1767575012,open,n\xffws,35\nu1,1767657600,end,,\n")
cases["refuse-non-utf8-user.csv"] = (b"# expect: refuse 3 user\n" + H.encode()
                                     + b"u\xff1,1767571200,begin,,UTC\nu\xff1,1767657600,end,,\n")
cases["refuse-empty.csv"] = b"# expect: refuse 1 -\n"

for old in out.glob("*.csv"):
    old.unlink()
for name, data in sorted(cases.items()):
    (out / name).write_bytes(data)
print(f"{len(cases)} files in {out}")
