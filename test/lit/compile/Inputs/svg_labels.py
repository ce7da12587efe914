"""Checks the crossing labels of an mdc-compile --graph SVG: prints how
many there are and whether any two overlap, and fails unless each label
sits on its own crossing's line."""

import math
import re
import sys

svg = open(sys.argv[1]).read()
lines = [tuple(map(float, m)) for m in re.findall(
    r'<line x1="([\d.]+)" y1="([\d.]+)" x2="([\d.]+)" y2="([\d.]+)" stroke="#e67e22"', svg)]
# A label's extent from its text: centred at x, its baseline 4 below the
# centre, 6.8 px a character (bold 12 px Helvetica) and 4 px each side.
labels = [(float(x), float(y) - 4, text) for x, y, text in re.findall(
    r'<text x="([\d.]+)" y="([\d.]+)"[^>]*fill="#b35900"[^>]*>([^<]*)</text>', svg)]
boxes = [(x - (len(t) * 6.8 + 8) / 2, y - 8, x + (len(t) * 6.8 + 8) / 2, y + 8) for x, y, t in labels]


def distance(px, py, x1, y1, x2, y2):
    t = max(0.0, min(1.0, ((px - x1) * (x2 - x1) + (py - y1) * (y2 - y1)) / ((x2 - x1) ** 2 + (y2 - y1) ** 2)))
    return math.hypot(px - (x1 + t * (x2 - x1)), py - (y1 + t * (y2 - y1)))


overlapping = [(i, j) for i in range(len(boxes)) for j in range(i) if
               boxes[i][0] < boxes[j][2] and boxes[j][0] < boxes[i][2] and
               boxes[i][1] < boxes[j][3] and boxes[j][1] < boxes[i][3]]
print(f"{len(lines)} crossings, {len(labels)} labels, {'overlapping' if overlapping else 'apart'}")
# Label k belongs to crossing line k (both are drawn in edge order).
for k, ((x1, y1, x2, y2), box) in enumerate(zip(lines, boxes)):
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    if distance(cx, cy, x1, y1, x2, y2) > 1.0:
        sys.exit(f"label {k} at ({cx}, {cy}) is off its crossing's line")
