#!/usr/bin/env python3
"""Structural checks of the Swift sources, run by CI (scripts/check-structure.sh).

1. No file under Sources/ has more than MAX_FILE_LINES lines.
2. No function, initializer, subscript or deinitializer, at any indentation
   (methods, nested functions, local functions), spans more than
   MAX_FUNCTION_LINES lines, counted from the line of its keyword to the line
   of its closing brace.
3. Every `import` of one of the package's own modules, in Sources/ and Tests/,
   is declared in that target's dependencies in Package.swift (read through
   `swift package dump-package`, so the manifest is evaluated, not parsed).

Usage: check_structure.py PACKAGE_DIR DUMP_JSON
Exit 0 when every check holds; 1 with one line per violation otherwise.
"""
import json
import os
import re
import sys

MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 120
DECLARATION_KEYWORDS = {"func", "init", "deinit", "subscript"}
# A declaration that ends a bodiless requirement (protocols) before any `{`.
DECLARATION_STARTS = {"func", "init", "deinit", "subscript", "var", "let", "case",
                      "struct", "class", "enum", "protocol", "extension", "typealias",
                      "associatedtype", "actor"}


def code_only(text):
    """The text with comments and string literals blanked (newlines kept).

    Handles nested block comments, escapes, multi-line and raw strings, and
    string interpolation (whose code is kept, so braces inside `\\( )` count
    as code, as the compiler reads them).
    """
    out = []
    i, n = 0, len(text)
    # Stack of contexts: ("code", paren_depth_for_interpolation) or
    # ("string", closing_delimiter, raw_hashes).
    stack = [("code", None)]

    def blank(s):
        return "".join("\n" if c == "\n" else " " for c in s)

    while i < n:
        ctx = stack[-1]
        c = text[i]
        if ctx[0] == "code":
            if text.startswith("//", i):
                j = text.find("\n", i)
                j = n if j < 0 else j
                out.append(blank(text[i:j]))
                i = j
                continue
            if text.startswith("/*", i):
                depth, j = 1, i + 2
                while j < n and depth:
                    if text.startswith("/*", j):
                        depth, j = depth + 1, j + 2
                    elif text.startswith("*/", j):
                        depth, j = depth - 1, j + 2
                    else:
                        j += 1
                out.append(blank(text[i:j]))
                i = j
                continue
            m = re.match(r'(#*)("""|")', text[i:i + 16])
            if m and (m.group(1) == "" or c == "#"):
                hashes, quote = m.group(1), m.group(2)
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
                stack.append(("string", quote + hashes, hashes))
                continue
            if ctx[1] is not None:
                if c == "(":
                    stack[-1] = ("code", ctx[1] + 1)
                elif c == ")":
                    if ctx[1] == 0:
                        stack.pop()
                        out.append(" ")
                        i += 1
                        continue
                    stack[-1] = ("code", ctx[1] - 1)
            out.append(c)
            i += 1
        else:
            closing, hashes = ctx[1], ctx[2]
            if text.startswith(closing, i):
                out.append(" " * len(closing))
                i += len(closing)
                stack.pop()
                continue
            escape = "\\" + hashes
            if text.startswith(escape + "(", i):
                out.append(" " * (len(escape) + 1))
                i += len(escape) + 1
                stack.append(("code", 0))
                continue
            if text.startswith(escape, i) and i + len(escape) < n:
                out.append(blank(text[i:i + len(escape) + 1]))
                i += len(escape) + 1
                continue
            out.append("\n" if c == "\n" else " ")
            i += 1
    return "".join(out)


def long_functions(path, text):
    """(line, name, length) of every declaration longer than the limit."""
    code = code_only(text)
    line_starts = [0]
    for k, ch in enumerate(code):
        if ch == "\n":
            line_starts.append(k + 1)

    def line_of(offset):
        lo, hi = 0, len(line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1

    found = []
    for m in re.finditer(r"\b(func|init|deinit|subscript)\b", code):
        start = m.start()
        if start > 0 and code[start - 1] in ".@$":
            continue  # `.init(`, `self.init`, attributes
        depth, j, body = 0, m.end(), None
        while j < len(code):
            ch = code[j]
            if ch in "([<":
                depth += 1
            elif ch in ")]>":
                # `->` is not a closing angle bracket.
                if not (ch == ">" and code[j - 1] == "-"):
                    depth = max(0, depth - 1)
            elif depth == 0:
                if ch == "{":
                    body = j
                    break
                if ch == "}":
                    break
                word = re.match(r"[A-Za-z_]+", code[j:j + 16])
                if word and (j == 0 or not (code[j - 1].isalnum() or code[j - 1] == "_")) \
                        and word.group(0) in DECLARATION_STARTS:
                    break
            j += 1
        if body is None:
            continue
        level, k = 0, body
        while k < len(code):
            if code[k] == "{":
                level += 1
            elif code[k] == "}":
                level -= 1
                if level == 0:
                    break
            k += 1
        first, last = line_of(start), line_of(k)
        length = last - first + 1
        if length > MAX_FUNCTION_LINES:
            name = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*)?", code[m.end():]).group(1) or ""
            found.append((first, f"{m.group(1)} {name}".strip(), length))
    return found


def swift_files(root):
    for base, _, files in os.walk(root):
        for name in sorted(files):
            if name.endswith(".swift"):
                yield os.path.join(base, name)


def main():
    package_dir, dump_path = sys.argv[1], sys.argv[2]
    with open(dump_path, encoding="utf-8") as f:
        manifest = json.load(f)
    ours = {t["name"] for t in manifest["targets"]}
    problems = []

    for path in swift_files(os.path.join(package_dir, "Sources")):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        rel = os.path.relpath(path, package_dir)
        lines = text.count("\n") + (0 if text.endswith("\n") else 1)
        if lines > MAX_FILE_LINES:
            problems.append(f"{rel}: {lines} lines (at most {MAX_FILE_LINES})")
        for line, name, length in long_functions(path, text):
            problems.append(f"{rel}:{line}: {name} is {length} lines (at most {MAX_FUNCTION_LINES})")

    for target in manifest["targets"]:
        if target["type"] == "system":
            continue
        declared = set()
        for dep in target["dependencies"]:
            for kind in ("byName", "target"):
                if kind in dep:
                    declared.add(dep[kind][0])
        folder = target.get("path") or os.path.join(
            "Tests" if target["type"] == "test" else "Sources", target["name"])
        for path in swift_files(os.path.join(package_dir, folder)):
            with open(path, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    m = re.match(r"\s*(?:@[A-Za-z_]+(?:\([^)]*\))?\s+)*import\s+(?:(?:struct|class|enum|func|var|let|protocol|typealias)\s+)?([A-Za-z_][A-Za-z0-9_]*)", line)
                    if m and m.group(1) in ours and m.group(1) not in declared and m.group(1) != target["name"]:
                        rel = os.path.relpath(path, package_dir)
                        problems.append(f"{rel}:{number}: imports {m.group(1)}, not a declared dependency of {target['name']}")

    for p in problems:
        print(p)
    print(f"structure: {len(problems)} problem(s)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
