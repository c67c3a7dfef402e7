"""The grammar of FetchLab's inputs, as the Swift reader reads them (docs/trace-format.md).

Numbers are decimal only, times are Unix seconds or the ISO 8601 forms the
trace format names, zones are ``UTC``, ``±HH:MM`` or a tz database name
of the release in :mod:`fetchlab._zones`. :func:`read_trace` checks a whole
trace the way ``fetchlab validate`` does, so that a file is accepted by
both or refused by both (the shared corpus in ``Tests/Conformance/traces``
holds both readers to it).
"""
import os
import re
from datetime import timedelta, timezone
from zoneinfo import ZoneInfo

from ._zones import NAMES as IANA_NAMES, RELEASE as IANA_RELEASE

#: ``[+-]? (digits [. digits*] | . digits) ([eE] [+-]? digits)?``, ASCII digits only.
NUMBER = re.compile(rb"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NUMBER_TEXT = re.compile(NUMBER.pattern.decode())
_ISO = re.compile(
    rb"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt ]([0-9]{2}):([0-9]{2})"
    rb"(?::([0-9]{2})(?:[.,]([0-9]+))?)?"
    rb"(?:([Zz])|([+-])([0-9]{2})(?::?([0-9]{2}))?)?")
_OFFSET_ZONE = re.compile(r"([+-])([0-9]{2}):([0-9]{2})")
#: The times a trace may hold (Unix s): 1970-01-01 to 2100-01-01.
PLAUSIBLE = (0.0, 4_102_444_800.0)
MAX_NAME_BYTES = 256
MAX_REGION_BYTES = 64
EVENTS = ("begin", "open", "wake", "battery", "charge_start", "charge_end", "network", "update", "location", "end")
NETWORKS = ("offline", "wifi", "cellular", "lte", "3g", "5g")
HEADER = b"user,time,event,app,value"


class TraceError(ValueError):
    """A trace the format refuses, as ``file:line: field: message``."""

    def __init__(self, path, line, field, message):
        super().__init__(f"{path}:{line}: {field}: {message}")
        self.path, self.line, self.field, self.message = str(path), line, field, message


def number(text):
    """The value of a decimal number (``str`` or ``bytes``), or None for text outside the grammar.

    ``1e400`` gives ``inf``: callers refuse magnitudes beyond 1.8e308.
    """
    if isinstance(text, bytes):
        return float(text) if NUMBER.fullmatch(text) else None
    return float(text) if _NUMBER_TEXT.fullmatch(text) else None


def _days(y, m, d):
    """Days from 1970-01-01 to the proleptic Gregorian date y-m-d."""
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _valid_date(y, m, d):
    if not 1 <= m <= 12 or d < 1:
        return False
    leap = y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
    return d <= (31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)[m - 1]


def iso8601(text):
    """``(wall_seconds, offset_seconds_or_None)`` of an ISO 8601 time of the grammar, else None.

    ``YYYY-MM-DD(T|t| )HH:MM[:SS[(.|,)fraction]][Z|z|±HH:MM|±HHMM|±HH]``, offset
    hours 00-14; invalid dates (2026-02-30), 24:00 and :60 are refused.
    """
    if isinstance(text, str):
        text = text.encode("utf-8", "surrogateescape")
    m = _ISO.fullmatch(text)
    if not m:
        return None
    y, mo, d, h, mi = (int(m.group(i)) for i in range(1, 6))
    s = int(m.group(6)) if m.group(6) else 0
    if not _valid_date(y, mo, d) or h >= 24 or mi >= 60 or s >= 60:
        return None
    frac = float(b"0." + m.group(7)) if m.group(7) else 0.0
    offset = None
    if m.group(8):
        offset = 0
    elif m.group(9):
        oh = int(m.group(10))
        om = int(m.group(11)) if m.group(11) else 0
        if oh > 14 or om >= 60:
            return None
        offset = (-1 if m.group(9) == b"-" else 1) * (oh * 3600 + om * 60)
    wall = _days(y, mo, d) * 86400 + h * 3600 + mi * 60 + s + frac
    return wall, offset


def parse_zone(text):
    """A ``begin`` row's zone as a tzinfo, or None when the format does not name one.

    ``UTC``, ``Z`` or empty; ``±HH:MM`` (hours 00-14); or a Zone or Link name of
    the tz database release :data:`IANA_RELEASE` (:data:`IANA_NAMES`), exactly as
    spelt there. ``UTC+1``, ``GMT+0530`` and removed names such as
    ``US/Pacific-New`` are not zones, whatever a platform's library accepts.
    """
    if text in ("", "UTC", "Z"):
        return timezone.utc
    m = _OFFSET_ZONE.fullmatch(text)
    if m:
        h, mi = int(m.group(2)), int(m.group(3))
        if h > 14 or mi >= 60:
            return None
        off = timedelta(hours=h, minutes=mi)
        return timezone(-off if m.group(1) == "-" else off)
    if text not in IANA_NAMES:
        return None
    try:
        return ZoneInfo(text)
    except Exception:  # a listed name missing from this machine's zone data
        return None


def zone_problem(text):
    """Why ``text`` is not a zone, for an error after ``unknown time zone '...'``."""
    m = re.fullmatch(r"(?:UTC|GMT)?([+-])([0-9:]{1,5})", text)
    if m:
        digits = m.group(2).replace(":", "")
        if digits.isdigit() and len(digits) <= 4:
            h, mi = (int(digits), 0) if len(digits) <= 2 else (int(digits[:-2]), int(digits[-2:]))
            if h <= 14 and mi < 60:
                return f"an offset is written ±HH:MM: {m.group(1)}{h:02d}:{mi:02d}"
    return f"use UTC, ±HH:MM such as +05:30, or a tz database {IANA_RELEASE} name such as America/New_York"


def _records(data, max_line):
    """``(line, record bytes)`` for each record of ``data``; a quoted field may hold line breaks."""
    line, i, n = 1, 0, len(data)
    while i < n:
        j = data.find(b"\n", i)
        end = n if j < 0 else j
        # A record with an odd number of quotes so far continues past the line break.
        breaks = 0
        while data.count(b'"', i, end) % 2 == 1 and end < n:
            k = data.find(b"\n", end + 1)
            breaks += 1
            end = n if k < 0 else k
        if end == n and data.count(b'"', i, end) % 2 == 1:
            raise TraceError("", line, "-", "unterminated quoted field")
        rec = data[i:end]
        if rec.endswith(b"\r") and end < n:  # CR LF line ends, as FetchLab's reader takes them
            rec = rec[:-1]
        if len(rec) > max_line:
            raise TraceError("", line, "-", f"line of more than {max_line} bytes")
        yield line, rec
        line += 1 + breaks
        i = end + 1


def _fields(rec, fail):
    """The five fields of a record (RFC 4180 quotes)."""
    if b'"' not in rec:
        f = rec.split(b",")
        if len(f) != 5:
            fail("-", f"expected 5 fields ({HEADER.decode()}), found {len(f) if len(f) < 5 else 'more than 5'}")
        return f
    out, i, n = [], 0, len(rec)
    columns = ("user", "time", "event", "app", "value")
    while True:
        if len(out) >= 5:
            fail("-", f"expected 5 fields ({HEADER.decode()}), found more than 5")
        if i < n and rec[i:i + 1] == b'"':
            buf, j, closed = bytearray(), i + 1, False
            while j < n:
                c = rec[j:j + 1]
                if c == b'"':
                    if rec[j + 1:j + 2] == b'"':
                        buf += b'"'
                        j += 2
                        continue
                    closed = True
                    j += 1
                    break
                buf += c
                j += 1
            if not closed:
                fail(columns[len(out)], "unterminated quoted field")
            if j != n and rec[j:j + 1] != b",":
                fail(columns[len(out)], "text after closing quote")
            out.append(bytes(buf))
            if j == n:
                break
            i = j + 1
        else:
            end = rec.find(b",", i)
            end = n if end < 0 else end
            out.append(rec[i:end])
            if end == n:
                break
            i = end + 1
    if len(out) != 5:
        fail("-", f"expected 5 fields ({HEADER.decode()}), found {len(out)}")
    return out


def _name_problem(name, size, what):
    if size > MAX_NAME_BYTES:
        return f"{what} of {size} bytes is longer than {MAX_NAME_BYTES} (the longest a trace may hold)"
    if any((ord(c) < 0x20 and c not in "\t\n\r") or 0x7F <= ord(c) <= 0x9F for c in name):
        return f"{what} {name!r} contains a control character"
    return None


def read_trace(path):
    """Checks the trace at ``path`` as FetchLab's reader does and returns its rows.

    Returns ``(rows, zones)``: rows as ``(user, time, event, app, value)`` with
    ``time`` in Unix seconds (``value`` the text as written), and each user's
    zone as a tzinfo. Raises :class:`TraceError` (``file:line: field: message``)
    for anything ``fetchlab validate`` refuses; docs/trace-format.md lists the rules.
    """
    path = str(path)
    max_line = int(float(os.environ.get("FETCHLAB_MAX_LINE_BYTES", 1 << 20)))
    max_events = int(float(os.environ.get("FETCHLAB_MAX_EVENTS_PER_USER", 20_000_000)))
    with open(path, "rb") as f:
        data = f.read()
    rows, zones = [], {}
    state = {"line": 0}

    def fail(field, message):
        raise TraceError(path, state["line"], field, message)

    def text(b, field):
        try:
            return b.decode("utf-8")
        except UnicodeDecodeError:
            fail(field, "not valid UTF-8")

    def num(b, field):
        x = number(b)
        if x is None:
            fail(field, f"expected a decimal number (such as 35 or 1.5e3), found {b[:40].decode('utf-8', 'replace')!r}")
        if x != x or x in (float("inf"), float("-inf")):
            fail(field, f"number {b[:40].decode('utf-8', 'replace')!r} is beyond ±1.8e308")
        return x

    def time_of(b):
        if len(b) >= 16 and b[4:5] == b"-" and (iso := iso8601(b)) is not None:
            wall, off = iso
            if off is None:
                fail("time", f"ISO 8601 time {b.decode('utf-8', 'replace')!r} has no zone: add Z (UTC) or an offset such as +01:00")
            t = wall - off
        elif len(b) >= 5 and b[:4].isdigit() and b[4:5] == b"-":
            fail("time", f"{b[:40].decode('utf-8', 'replace')!r} is not a time: the accepted forms are Unix seconds (such as "
                 "1767600000) and ISO 8601 calendar date-times, YYYY-MM-DDTHH:MM[:SS[.fff]] with Z or an offset such as "
                 "+01:00 (a valid date); week dates (2026-W02-1), ordinal dates (2026-005) and a date without a time are not")
        else:
            t = num(b, "time")
        if not PLAUSIBLE[0] <= t <= PLAUSIBLE[1]:
            fail("time", f"time {t!r} is outside 1970-01-01...2100-01-01, the dates a trace may hold")
        return t

    saw_header, user, first_line, last, count = False, None, 0, None, 0
    finished = set()
    try:
        for line, rec in _records(data, max_line):
            state["line"] = line
            if not rec:
                continue
            if not saw_header:
                if rec[:1] == b"#":
                    continue
                head = rec[3:] if line == 1 and rec[:3] == b"\xef\xbb\xbf" else rec
                if head[:1] == b"#":
                    continue
                if head != HEADER:
                    fail("-", "line ends are CR LF: write LF only" if b"\r" in head
                         else f"expected header '{HEADER.decode()}'")
                saw_header = True
                continue
            u, tb, eb, ab, vb = _fields(rec, fail)
            if not u:
                fail("user", "empty user id")
            t = time_of(tb)
            event = eb.decode("utf-8", "replace")
            if event not in EVENTS:
                text(eb, "event")
                fail("event", f"unknown event {event[:40]!r} (expected {', '.join(EVENTS)})")
            if event == "begin":
                if user is not None:
                    fail("event", f"user {user!r} (begun on line {first_line}) has no 'end' row before this 'begin'")
                name = text(u, "user")
                if (p := _name_problem(name, len(u), "user id")) is not None:
                    fail("user", p)
                if name in finished:
                    fail("user", f"user {name!r} appears again; each user's rows must be contiguous")
                if ab:
                    fail("app", "'begin' takes no app")
                ztext = text(vb, "value")
                zone = parse_zone(ztext)
                if zone is None:
                    fail("value", f"unknown time zone {ztext[:40]!r} ({zone_problem(ztext)})")
                user, ubytes, first_line, last, count = name, u, line, t, 0
                zones[name] = zone
                rows.append((name, t, event, "", ztext))
                continue
            if user is None:
                who = u.decode("utf-8", "replace")
                fail("event", f"'{event}' row after the 'end' row of user {who!r}" if who in finished
                     else f"'{event}' row before any 'begin' row for user {who!r}")
            if u != ubytes:
                fail("user", f"user {u.decode('utf-8', 'replace')!r} starts before user {user!r} has its 'end' row")
            if t < last:
                fail("time", f"time {t!r} is earlier than the previous row's {last!r}; rows of a user must be sorted by time")
            last = t
            if event == "end":
                if ab or vb:
                    fail("value" if not ab else "app", "'end' takes no app or value")
                finished.add(user)
                rows.append((user, t, event, "", ""))
                user = None
                continue
            app = ""
            if ab:
                if event not in ("open", "wake", "update"):
                    fail("app", f"'{event}' takes no app")
                app = text(ab, "app")
                if (p := _name_problem(app, len(ab), "app name")) is not None:
                    fail("app", p)
            elif event in ("open", "update"):
                fail("app", f"'{event}' needs an app")
            value = vb
            if event in ("open", "wake"):
                if not vb:
                    fail("value", f"'{event}' needs a duration in seconds")
                if not 0 <= num(vb, "value") <= 86400:
                    fail("value", "duration outside 0...86400 s")
            elif event == "battery":
                if not 0 <= num(vb, "value") <= 100:
                    fail("value", "battery level outside 0...100 %")
            elif event == "network":
                if vb.decode("utf-8", "replace") not in NETWORKS:
                    text(vb, "value")
                    fail("value", f"unknown network {vb[:40].decode('utf-8', 'replace')!r} (expected {', '.join(NETWORKS)})")
            elif event == "update":
                if vb and not 0 <= num(vb, "value") <= 1e12:
                    fail("value", "item size outside 0...1e12 bytes")
            elif event in ("charge_start", "charge_end"):
                if vb:
                    fail("value", f"'{event}' takes no value")
            elif event == "location":
                _location(text(vb, "value"), fail)
            count += 1
            if count > max_events:
                fail("user", f"user {user!r} (begun on line {first_line}) has more than {max_events} events")
            rows.append((user, t, event, app, text(value, "value")))
    except TraceError as e:
        if not e.path:
            raise TraceError(path, e.line, e.field, e.message) from None
        raise
    if not saw_header:
        raise TraceError(path, state["line"], "-", f"empty trace: no header row '{HEADER.decode()}'")
    if user is not None:
        raise TraceError(path, state["line"], "-", f"file ends inside user {user!r} (begun on line {first_line}): "
                         "no 'end' row; is the file truncated?")
    return rows, zones


def _location(v, fail):
    kind, sep, region = v.partition(":")
    if kind not in ("significant", "enter", "exit"):
        fail("value", f"unknown location change {v[:80]!r} (expected significant, enter, exit, enter:<region>, exit:<region>)")
    if not sep:
        return
    if kind == "significant":
        fail("value", "'significant' takes no region id")
    if not region:
        fail("value", "empty region id")
    if len(region.encode("utf-8")) > MAX_REGION_BYTES:
        fail("value", f"region id longer than {MAX_REGION_BYTES} bytes")
    if any(c in ',"' or ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in region):
        fail("value", "region id contains a comma, quote, line break or other control character")
