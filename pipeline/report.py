"""What mdc did to a program, for people: the transfer report and the
placement picture.

``--report=FILE.json`` (or ``.md``) lists every crossing between devices:
source location, from and to devices, element type and shape, bytes
(symbolic for dynamic dimensions), the strategy and why, and which device's
memory it is staged through; then a summary per device pair, and what each
dynamic dimension is. A dynamic dimension has one name (d0, d1, ...) in the
whole report and picture, and a tensor is shown with the program's own
type where IREE moves it collapsed (passes/sizes.py).

``--graph=FILE.svg`` (or ``.dot``) draws the program's work in one lane per
device, in program order, with crossings as labelled edges between lanes.
The SVG is drawn here, with no Graphviz needed.
"""

from __future__ import annotations

import html
import json
from collections import defaultdict

from mdc.passes.outputs import Report
from mdc.passes.sizes import real_size

_COLOURS = {"local": "#3b7dd8", "cuda": "#3a9d5d", "hip": "#c0392b", "vulkan": "#8e44ad"}


class _Names:
    """d0, d1, ... for the dynamic dimensions a report meets, in order: one
    name per dimension (sizes.Dim.key) across the whole report."""

    def __init__(self):
        self.names: dict = {}
        self.what: dict = {}

    def see(self, size):
        for extent in (size.dims or ()) + ((size.bytes,) if size.bytes is not None else ()):
            for d in extent.dims:
                if d.key not in self.names:
                    self.names[d.key] = f"d{len(self.names)}"
                    self.what[d.key] = d.what
        return size

    def legend(self) -> list[dict]:
        return [{"name": n, "is": self.what[k]} for k, n in self.names.items()]


def _crossing_sizes(done: Report):
    """The names, each crossing's size (the program's own type where IREE
    moves it collapsed, sizes.real_size) and each shared-pair edge's size."""
    names = _Names()
    crossings = [names.see(real_size(c.size, c.location, done.source_types)) if c.size else None
                 for c in done.crossings]
    edges = {}
    if done.graph is not None:
        for i, e in enumerate(done.graph.edges):
            if e.crossing and e.size is not None:
                location = done.graph.nodes[e.target].location
                edges[i] = names.see(real_size(e.size, location, done.source_types))
    return names, crossings, edges


def _shape(size, names: dict):
    if size is None or size.dims is None:
        return None
    return [e.static if not e.dims else e.text(names) for e in size.dims]


def report_data(done: Report, devices) -> dict:
    graph = done.graph
    names, sizes, edge_sizes = _crossing_sizes(done)
    entries = []
    for c, size in zip(done.crossings, sizes):
        strategy = {"staged": "staged", "staged-via-host": "staged through host twice"}.get(
            c.policy.mode, "left to IREE")
        if c.caller_buffer == "pinned argument":
            strategy += ", straight from the caller's pinned argument"
        elif c.caller_buffer == "pinned output":
            strategy += ", straight into the caller's pinned output"
        elif c.caller_buffer == "output storage":
            strategy += ", into the caller's output storage"
        entries.append({
            "location": c.location,
            "from": c.source,
            "to": c.target,
            "kind": "explicit transfer" if c.shape == "transfer" else "implicit (no transfer in the source)",
            "tensor": size.encoding if size is not None else c.encoding,
            "bytes": size.bytes_text(names.names) if size is not None else c.bytes,
            "shape": _shape(size, names.names),
            "strategy": strategy,
            "why": c.policy.reason,
            "staging_memory_of": c.policy.owner or c.policy.via,
        })
    # Crossings IREE handles itself (shared pairs) come from the graph.
    if graph is not None:
        for i, e in enumerate(graph.edges):
            if e.crossing and e.strategy == "left to IREE":
                src, dst = graph.nodes[e.source], graph.nodes[e.target]
                size = edge_sizes.get(i)
                entries.append({
                    "location": dst.location, "from": src.device, "to": dst.device,
                    "kind": "value used on another device", "tensor": size.encoding if size else None,
                    "bytes": size.bytes_text(names.names) if size else e.bytes,
                    "shape": _shape(size, names.names),
                    "strategy": "left to IREE", "why": "the devices share memory",
                    "staging_memory_of": None,
                })
    summary = defaultdict(lambda: {"count": 0, "bytes": []})
    for e in entries:
        key = f"{e['from']} -> {e['to']}"
        summary[key]["count"] += 1
        summary[key]["bytes"].append(e["bytes"])
    return {
        "devices": [{"name": d.name, "spec": d.spec} for d in devices],
        "crossings": entries,
        "summary": [{"pair": k, "count": v["count"], "bytes": " + ".join(v["bytes"])}
                    for k, v in summary.items()],
        "dimensions": names.legend(),
    }


def _tensor_cell(c: dict) -> str:
    cell = f"`{c['tensor'] or '?'}`"
    shape = c.get("shape")
    if shape and any(isinstance(d, str) for d in shape):
        cell += " (" + " x ".join(str(d) for d in shape) + ")"
    return cell


def report_markdown(data: dict, source: str) -> str:
    lines = [f"# mdc transfer report: `{source}`", "",
             "Devices: " + ", ".join(f"`{d['name']}` = `{d['spec']}`" for d in data["devices"]), ""]
    if not data["crossings"]:
        lines += ["No value crosses between devices.", ""]
    else:
        lines += ["| # | location | from | to | tensor | bytes | strategy | staged through | why |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for i, c in enumerate(data["crossings"], 1):
            lines.append(f"| {i} | `{c['location']}` | {c['from']} | {c['to']} | {_tensor_cell(c)} | "
                         f"{c['bytes']} | {c['strategy']} | {c['staging_memory_of'] or '-'} | {c['why']} |")
        lines += ["", "## Summary", "", "| device pair | crossings | bytes per call |", "|---|---|---|"]
        for s in data["summary"]:
            lines.append(f"| {s['pair']} | {s['count']} | {s['bytes']} |")
    if data.get("dimensions"):
        lines += ["", "## Dynamic dimensions", ""]
        lines += [f"- `{d['name']}`: {d['is']}" for d in data["dimensions"]]
    lines.append("")
    return "\n".join(lines)


def _edge_bytes(done: Report) -> dict:
    """Each graph edge's bytes as text, dimensions named as in the report."""
    names, _, sizes = _crossing_sizes(done)
    return {i: size.bytes_text(names.names) for i, size in sizes.items()}


def graph_dot(done: Report) -> str:
    graph = done.graph
    labels = _edge_bytes(done)
    out = ["digraph mdc {", "  rankdir=TB;", "  node [shape=box, style=filled, fontname=Helvetica];"]
    by_device = defaultdict(list)
    for n in graph.nodes:
        by_device[n.device].append(n)
    for device, nodes in by_device.items():
        driver = graph.devices.get(device, "?")
        colour = _COLOURS.get(driver, "#999999")
        out.append(f'  subgraph "cluster_{device}" {{ label="{device} ({driver})"; color="{colour}";')
        for n in nodes:
            out.append(f'    n{n.id} [label="{n.function}: {n.label}", fillcolor="{colour}33"];')
        out.append("  }")
    for i, e in enumerate(graph.edges):
        if e.crossing:
            out.append(f'  n{e.source} -> n{e.target} [color="#e67e22", penwidth=2.5, '
                       f'label="{labels.get(i, e.bytes)} B, {e.strategy}"];')
        else:
            out.append(f"  n{e.source} -> n{e.target};")
    out.append("}")
    return "\n".join(out) + "\n"


def graph_svg(done: Report) -> str:
    graph = done.graph
    labels = _edge_bytes(done)
    lanes = list(graph.devices)
    lane_w, row_h, box_w, box_h, top = 300, 56, 230, 34, 70
    x_of = {d: 40 + i * lane_w for i, d in enumerate(lanes)}
    rows: dict[int, int] = {}
    row = 0
    last_function = None
    y_titles = []
    for n in graph.nodes:
        if n.function != last_function:
            y_titles.append((row, n.function))
            row += 1
            last_function = n.function
        rows[n.id] = row
        row += 1
    width = 40 + len(lanes) * lane_w
    height = top + row * row_h + 30
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'font-family="Helvetica, Arial, sans-serif" font-size="12">',
             '<defs><marker id="a" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
             'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker>'
             '<marker id="x" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
             'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#e67e22"/></marker></defs>',
             f'<rect width="{width}" height="{height}" fill="white"/>']
    for d in lanes:
        colour = _COLOURS.get(graph.devices[d], "#999999")
        x = x_of[d]
        parts.append(f'<rect x="{x - 10}" y="20" width="{lane_w - 30}" height="{height - 30}" rx="8" '
                     f'fill="{colour}" fill-opacity="0.07" stroke="{colour}"/>')
        parts.append(f'<text x="{x + (lane_w - 50) / 2}" y="42" text-anchor="middle" font-weight="bold" '
                     f'fill="{colour}">{html.escape(d)} ({html.escape(graph.devices[d])})</text>')
    for r, name in y_titles:
        parts.append(f'<text x="30" y="{top + r * row_h + 20}" font-style="italic" fill="#444">'
                     f'{html.escape(name)}</text>')
    centre = {}
    for n in graph.nodes:
        lane = n.device if n.device in x_of else lanes[0]
        x, y = x_of[lane], top + rows[n.id] * row_h
        colour = _COLOURS.get(graph.devices.get(lane, ""), "#999999")
        centre[n.id] = (x + box_w / 2, y + box_h / 2, x, y)
        parts.append(f'<rect x="{x}" y="{y}" width="{box_w}" height="{box_h}" rx="5" fill="{colour}" '
                     f'fill-opacity="0.25" stroke="{colour}"><title>{html.escape(n.location or "")}</title></rect>')
        parts.append(f'<text x="{x + box_w / 2}" y="{y + 21}" text-anchor="middle">'
                     f'{html.escape(n.label[:34])}</text>')
    for i, e in enumerate(graph.edges):
        (x1, y1, bx1, by1), (x2, y2, bx2, by2) = centre[e.source], centre[e.target]
        if e.crossing:
            sx = bx1 + box_w if bx2 > bx1 else bx1
            ex = bx2 if bx2 > bx1 else bx2 + box_w
            parts.append(f'<line x1="{sx}" y1="{y1}" x2="{ex}" y2="{y2}" stroke="#e67e22" '
                         f'stroke-width="3" marker-end="url(#x)"/>')
            label = f"{labels.get(i, e.bytes)} B · {e.strategy}"
            parts.append(f'<text x="{(sx + ex) / 2}" y="{(y1 + y2) / 2 - 6}" text-anchor="middle" '
                         f'fill="#b35900" font-weight="bold">{html.escape(label)}</text>')
        elif by2 - by1 <= row_h:
            parts.append(f'<line x1="{x1}" y1="{by1 + box_h}" x2="{x2}" y2="{by2}" stroke="#555" '
                         f'stroke-width="1.2" marker-end="url(#a)"/>')
        else:  # skips rows: bow out to the left of the lane, clear of the boxes
            bow = bx1 - 6 - min(30, (by2 - by1) / row_h * 4)
            parts.append(f'<path d="M{bx1},{y1} C{bow},{y1} {bow},{y2} {bx2},{y2}" fill="none" '
                         f'stroke="#555" stroke-width="1.2" marker-end="url(#a)"/>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def render(path: str, done: Report, devices, source: str) -> bytes:
    """The bytes of a report or picture, by file extension."""
    if path.endswith(".json"):
        return (json.dumps(report_data(done, devices), indent=2) + "\n").encode()
    if path.endswith(".md"):
        return report_markdown(report_data(done, devices), source).encode()
    if path.endswith(".dot"):
        return graph_dot(done).encode()
    if path.endswith(".svg"):
        return graph_svg(done).encode()
    raise ValueError(path)
