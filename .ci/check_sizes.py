#!/usr/bin/env python3
"""Fails when a class body runs over 250 lines or a function body over 150 in core/ and app/.

Small classes and functions are a rule of docs/DEVELOPING.md ("Conventions"); this keeps it true. The scan is
lexical: comments, strings and character literals are blanked, then braces are matched. A brace block is a
class body when it follows `class|struct|union NAME ... {`, and a function body when the text before it ends
in `)` (optionally followed by const, noexcept, override, final, mutable or a trailing return type) and is
not a control statement; lambdas count as functions.
Usage: check_sizes.py [ROOT]   (prints each offender as FILE:LINE: kind NAME spans N lines)
"""
import os
import re
import sys

CLASS_LIMIT = 250
FUNCTION_LIMIT = 150
CONTROL = {"if", "for", "while", "switch", "catch", "return", "sizeof", "decltype", "alignof", "noexcept"}


def blank(src):
    """Comments, string and char literals replaced by spaces (newlines kept, so line numbers hold)."""
    out = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c == 'R' and src.startswith('R"', i) and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == '_')):
            k = src.find("(", i)
            delim = ")" + src[i + 2:k] + '"'
            j = src.find(delim, k)
            j = n if j < 0 else j + len(delim)
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and (src[i - 1].isalnum()) and i + 1 < n and src[i + 1].isalnum():
                out.append(" ")  # digit separator 1'000
                i += 1
                continue
            j = i + 1
            while j < n and src[j] != c and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(" " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


FUNC_TAIL = re.compile(r"\)\s*(?:const\s*|noexcept(?:\([^()]*\))?\s*|override\s*|final\s*|mutable\s*|&\s*|&&\s*)*"
                       r"(?:->\s*[\w:<>,\s\*&]+)?\s*$")
CLASS_HEAD = re.compile(r"\b(class|struct|union)\s+(?:\[\[[^\]]*\]\]\s*)?(\w+)[^;{}()]*$")
CTRL_HEAD = re.compile(r"\b(\w+)\s*\($")


def header_before(text, pos):
    """The statement text before a `{` at pos: back to the previous ; { } (balanced parentheses)."""
    depth = 0
    i = pos - 1
    while i >= 0:
        c = text[i]
        if c == ")":
            depth += 1
        elif c == "(":
            depth -= 1
        elif depth == 0 and c in ";{}":
            break
        i -= 1
    return text[i + 1:pos]


def first_paren_word(head):
    """The word before the outermost parenthesised list that ends the header."""
    depth = 0
    for i in range(len(head) - 1, -1, -1):
        c = head[i]
        if c == ")":
            depth += 1
        elif c == "(":
            depth -= 1
            if depth == 0:
                m = re.search(r"(\w+)\s*$", head[:i])
                return m.group(1) if m else ""
    return ""


def scan(path):
    src = open(path, encoding="utf-8", errors="replace").read()
    text = blank(src)
    stack = []
    found = []
    for pos, c in enumerate(text):
        if c == "{":
            head = header_before(text, pos)
            kind, name = None, ""
            m = CLASS_HEAD.search(head)
            if m and "=" not in head.split(m.group(0))[0][-2:]:
                kind, name = "class", m.group(2)
            elif FUNC_TAIL.search(head):
                word = first_paren_word(head.rstrip())
                if word not in CONTROL:
                    kind, name = "function", word or "lambda"
            stack.append((pos, kind, name))
        elif c == "}" and stack:
            start, kind, name = stack.pop()
            if kind:
                a = text.count("\n", 0, start) + 1
                b = text.count("\n", 0, pos) + 1
                span = b - a - 1
                limit = CLASS_LIMIT if kind == "class" else FUNCTION_LIMIT
                if span > limit:
                    found.append((path, a, kind, name, span, limit))
    return found


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    bad = []
    for top in ("core", "app"):
        for dp, _, fns in os.walk(os.path.join(root, top)):
            for f in sorted(fns):
                if f.endswith((".cpp", ".h")):
                    bad += scan(os.path.join(dp, f))
    for path, line, kind, name, span, limit in sorted(bad):
        print(f"{os.path.relpath(path, root)}:{line}: {kind} {name} spans {span} lines (limit {limit})")
    if bad:
        print(f"check_sizes: {len(bad)} over the limits")
        return 1
    print("check_sizes: every class body <= 250 lines, every function body <= 150")
    return 0


if __name__ == "__main__":
    sys.exit(main())
