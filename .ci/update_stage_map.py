#!/usr/bin/env python3
"""Copies the stage map the configure step wrote (build/<preset>/stage_map.md) into docs/DEVELOPING.md,
between its stage-map markers, so that ctest's stage_map passes after a source or header is added.
Usage: python3 .ci/update_stage_map.py [build/release]   (run from the repository root)"""
import pathlib
import sys

build = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "build/release")
doc = pathlib.Path("docs/DEVELOPING.md")
text = doc.read_text()
begin, end = "<!-- stage-map begin -->", "<!-- stage-map end -->"
head, rest = text.split(begin, 1)
_, tail = rest.split(end, 1)
table = (build / "stage_map.md").read_text().strip("\n")
doc.write_text(head + begin + "\n" + table + "\n" + end + tail)
