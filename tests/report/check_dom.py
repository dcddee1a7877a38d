"""Checks the DOM Chromium built from a tilesim report and the screenshot it took.
Usage: check_dom.py DOM.html SCREENSHOT.png SCHEDULE...
- the speedup and efficiency charts have exactly one curve per schedule, named after it, each
  with one point per GPU count at which it ran, and both axis labels;
- the timeline, link and memory charts exist with their axis labels and marks;
- the compare table has one row per schedule;
- the screenshot is a PNG of the window's size (1500 x 2200) and not one flat colour."""

import struct
import sys
import zlib
from html.parser import HTMLParser


class Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.svg = None  # id of the <svg> being read
        self.curves, self.labels, self.marks = {}, {}, {}
        self.rows, self.in_tbody, self.text_of = 0, False, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg":
            self.svg = a.get("id")
            self.curves[self.svg], self.labels[self.svg], self.marks[self.svg] = [], [], 0
        elif self.svg and tag == "path" and a.get("class") == "curve":
            self.curves[self.svg].append((a["data-series"], a["d"].count("L") + 1))
        elif self.svg and tag == "text" and a.get("class") == "axis-label":
            self.text_of = self.svg
        elif self.svg and tag == "rect" and a.get("class") in ("box", "bar"):
            self.marks[self.svg] += 1
        elif tag == "tbody":
            self.in_tbody = True
        elif tag == "tr" and self.in_tbody:
            self.rows += 1

    def handle_endtag(self, tag):
        if tag == "svg":
            self.svg = None
        elif tag == "tbody":
            self.in_tbody = False
        elif tag == "text":
            self.text_of = None

    def handle_data(self, data):
        if self.text_of:
            self.labels[self.text_of].append(data)


def fail(why):
    print("FAIL:", why)
    sys.exit(1)


def png_check(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail("screenshot is not a PNG")
    width, height = struct.unpack(">II", data[16:24])
    if (width, height) != (1500, 2200):
        fail(f"screenshot is {width}x{height}, expected 1500x2200")
    chunks, pos = b"", 8
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IDAT":
            chunks += data[pos + 8:pos + 8 + length]
        pos += 12 + length
    pixels = zlib.decompress(chunks)
    if len(set(pixels[: 1 << 20])) < 8:
        fail("screenshot is (nearly) one flat colour")
    return width, height


dom = Dom()
dom.feed(open(sys.argv[1], encoding="utf-8").read())
schedules = sys.argv[3:]
for chart in ("speedup", "efficiency"):
    names = [name for name, _ in dom.curves.get(chart, [])]
    if names != schedules:
        fail(f"{chart}: curves {names}, expected one per schedule {schedules}")
    if len(dom.labels[chart]) != 2 or "GPUs" not in dom.labels[chart]:
        fail(f"{chart}: axis labels {dom.labels[chart]}")
    for name, points in dom.curves[chart]:
        if points != 3:
            fail(f"{chart}: {name} has {points} points, expected 3 (64, 128, 256 GPUs)")
for chart in ("timeline", "links", "memory"):
    if chart not in dom.labels or len(dom.labels[chart]) != 2:
        fail(f"{chart}: missing, or axis labels {dom.labels.get(chart)}")
if dom.marks["timeline"] == 0 or dom.marks["memory"] == 0:
    fail("timeline or memory chart has no marks")
if not dom.curves["links"]:
    fail("links chart has no curve")
if dom.rows != len(schedules):
    fail(f"compare table has {dom.rows} rows, expected {len(schedules)}")
w, h = png_check(sys.argv[2])
print(f"ok: {len(schedules)} curves per chart, axis labels, {dom.marks['timeline']} timeline "
      f"boxes, {dom.marks['memory']} memory bars, {dom.rows} table rows, screenshot {w}x{h}")
