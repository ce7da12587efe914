"""What mdc did to a program, for people: the transfer report and the
placement picture.

``--report=FILE.json`` (or ``.md``) names the devices and the default one
(IREE's, where values without a device of their own live), then lists
every crossing between devices: source location, from and to devices,
element type and shape, bytes (symbolic for dynamic dimensions), the strategy and why, and which device's
memory it is staged through; then a summary per device pair, and what each
dynamic dimension is. A dynamic dimension has one name (d0, d1, ...) in the
whole report and picture, and a tensor is shown with the program's own
type where IREE moves it collapsed (passes/analysis/sizes.py).

``--graph=FILE.svg`` (or ``.dot``) draws the program's work in one lane per
device, in program order, each device's work in a colour of its own (so
that ``--place``'s choice shows), with crossings as labelled edges between
lanes.
The SVG is drawn here, with no Graphviz needed.
"""

from __future__ import annotations

import html
import json
from collections import defaultdict

from mdc.passes.infra.outputs import Report
from mdc.passes.analysis.sizes import real_size

from .module_record import ModuleRecord
from .placement_markdown import placement_markdown

_COLOURS = {"local": "#3b7dd8", "cuda": "#3a9d5d", "hip": "#c0392b", "vulkan": "#8e44ad"}
# For a second device of a driver already drawn (a CPU pair, two GPUs), so
# that every device's work has a colour of its own (--place's picture).
_MORE_COLOURS = ("#16a085", "#b7950b", "#7f3f98", "#5d6d7e", "#a04000", "#1f618d")


def device_colours(devices: dict) -> dict[str, str]:
    """A colour for each device (name -> driver, in lane order): its
    driver's for the first device of that driver, then the spare colours
    in turn, none used twice while they last."""
    colours: dict[str, str] = {}
    spare = iter(c for c in _MORE_COLOURS if c not in _COLOURS.values())
    for name, driver in devices.items():
        colour = _COLOURS.get(driver, "#999999")
        if colour in colours.values():
            colour = next(spare, colour)
        colours[name] = colour
    return colours


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


def _crossing_sizes(done: Report, source_types: dict):
    """The names, each crossing's size (the program's own type where IREE
    moves it collapsed, sizes.real_size) and each shared-pair edge's size."""
    names = _Names()
    crossings = [names.see(real_size(c.size, c.location, source_types)) if c.size else None
                 for c in done.crossings]
    edges = {}
    if done.graph is not None:
        for i, e in enumerate(done.graph.edges):
            if e.crossing and e.size is not None:
                location = done.graph.nodes[e.target].location
                edges[i] = names.see(real_size(e.size, location, source_types))
    return names, crossings, edges


def _shape(size, names: dict):
    if size is None or size.dims is None:
        return None
    return [e.static if not e.dims else e.text(names) for e in size.dims]


def report_data(done: Report, record: ModuleRecord, devices) -> dict:
    """The report of what mdc's passes did (``done``) to the program the
    stages recorded (``record``: its own tensor types, IREE's default
    device)."""
    graph = done.graph
    names, sizes, edge_sizes = _crossing_sizes(done, record.source_types)
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
    data = {
        "devices": [{"name": d.name, "spec": d.spec_as_given} for d in devices],
        "default_device": record.default_device,
        "crossings": entries,
        "summary": [{"pair": k, "count": v["count"], "bytes": " + ".join(v["bytes"])}
                    for k, v in summary.items()],
        "dimensions": names.legend(),
    }
    if done.placement is not None:  # --place: what assign-devices decided
        data["placement"] = done.placement
    return data


def _tensor_cell(c: dict) -> str:
    cell = f"`{c['tensor'] or '?'}`"
    shape = c.get("shape")
    if shape and any(isinstance(d, str) for d in shape):
        cell += " (" + " x ".join(str(d) for d in shape) + ")"
    return cell


def report_markdown(data: dict, source: str) -> str:
    lines = [f"# mdc transfer report: `{source}`", "",
             "Devices: " + ", ".join(f"`{d['name']}` = `{d['spec']}`" for d in data["devices"]), ""]
    if data.get("default_device"):
        lines += [f"Default device: `{data['default_device']}` (values and work without a device of "
                  "their own, arguments and results declared without one included)", ""]
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
    if data.get("placement"):  # --place: what assign-devices decided
        lines += placement_markdown(data["placement"])
    lines.append("")
    return "\n".join(lines)


def _edge_bytes(done: Report, record: ModuleRecord) -> dict:
    """Each graph edge's bytes as text, dimensions named as in the report."""
    names, _, sizes = _crossing_sizes(done, record.source_types)
    return {i: size.bytes_text(names.names) for i, size in sizes.items()}


def graph_dot(done: Report, record: ModuleRecord) -> str:
    graph = done.graph
    labels = _edge_bytes(done, record)
    out = ["digraph mdc {", "  rankdir=TB;", "  node [shape=box, style=filled, fontname=Helvetica];"]
    by_device = defaultdict(list)
    for n in graph.nodes:
        by_device[n.device].append(n)
    colours = device_colours(graph.devices)
    for device, nodes in by_device.items():
        driver = graph.devices.get(device, "?")
        colour = colours.get(device, "#999999")
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


# The SVG's geometry: each lane is LANE_W wide, its boxes BOX_W; the gap
# between a lane's boxes and the next lane's holds the crossings' labels.
LANE_W, ROW_H, BOX_W, BOX_H, TOP = 400, 56, 230, 34, 70
_CHAR_W, _LABEL_H = 6.8, 16  # a bold 12px Helvetica character, a label's height
# Where along a crossing its label may sit, tried in this order (0 is the
# source): off the middle first, so two crossings drawn between the same
# rows in opposite directions put their labels at opposite ends.
_LABEL_SPOTS = (0.3, 0.7, 0.5, 0.15, 0.85)


def _svg_rows(graph) -> tuple[dict[int, int], list[tuple[int, str]], int]:
    """Each node's row (program order, a title row before each function's
    first node), the title rows, and the number of rows."""
    rows: dict[int, int] = {}
    titles, row, last_function = [], 0, None
    for n in graph.nodes:
        if n.function != last_function:
            titles.append((row, n.function))
            row += 1
            last_function = n.function
        rows[n.id] = row
        row += 1
    return rows, titles, row


def _svg_frame(graph, lanes, x_of, titles, width: int, height: int) -> list[str]:
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'font-family="Helvetica, Arial, sans-serif" font-size="12">',
             '<defs><marker id="a" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
             'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker>'
             '<marker id="x" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
             'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#e67e22"/></marker></defs>',
             f'<rect width="{width}" height="{height}" fill="white"/>']
    colours = device_colours(graph.devices)
    for d in lanes:
        colour = colours[d]
        x = x_of[d]
        parts.append(f'<rect x="{x - 10}" y="20" width="{BOX_W + 20}" height="{height - 30}" rx="8" '
                     f'fill="{colour}" fill-opacity="0.07" stroke="{colour}"/>')
        parts.append(f'<text x="{x + BOX_W / 2}" y="42" text-anchor="middle" font-weight="bold" '
                     f'fill="{colour}">{html.escape(d)} ({html.escape(graph.devices[d])})</text>')
    for r, name in titles:
        parts.append(f'<text x="{x_of[lanes[0]] - 10}" y="{TOP + r * ROW_H + 20}" font-style="italic" '
                     f'fill="#444">{html.escape(name)}</text>')
    return parts


def _svg_boxes(graph, lanes, x_of, rows) -> tuple[list[str], dict]:
    """The nodes' boxes, and each node's (centre x, centre y, left, top)."""
    parts, corner = [], {}
    colours = device_colours(graph.devices)
    for n in graph.nodes:
        lane = n.device if n.device in x_of else lanes[0]
        x, y = x_of[lane], TOP + rows[n.id] * ROW_H
        colour = colours.get(lane, "#999999")
        corner[n.id] = (x + BOX_W / 2, y + BOX_H / 2, x, y)
        parts.append(f'<rect x="{x}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="5" fill="{colour}" '
                     f'fill-opacity="0.25" stroke="{colour}"><title>{html.escape(n.location or "")}</title></rect>')
        parts.append(f'<text x="{x + BOX_W / 2}" y="{y + 21}" text-anchor="middle">{_box_label(n.label)}</text>')
    return parts, corner


# The most characters of a label a box holds.
LABEL_CHARS = 34


def _box_label(label: str) -> str:
    """A box's label as SVG text: cut to the box with an ellipsis, so the
    reader sees it was cut, the whole label then its tooltip (a <title>)."""
    if len(label) <= LABEL_CHARS:
        return html.escape(label)
    return f"<title>{html.escape(label)}</title>{html.escape(label[:LABEL_CHARS - 1])}\u2026"


def _svg_edge(e, corner) -> tuple[str, tuple | None]:
    """One edge's line, and for a crossing its (start, end) points."""
    (x1, y1, bx1, by1), (x2, y2, bx2, by2) = corner[e.source], corner[e.target]
    if e.crossing:
        sx = bx1 + BOX_W if bx2 > bx1 else bx1
        ex = bx2 if bx2 > bx1 else bx2 + BOX_W
        return (f'<line x1="{sx}" y1="{y1}" x2="{ex}" y2="{y2}" stroke="#e67e22" '
                f'stroke-width="3" marker-end="url(#x)"/>'), ((sx, y1), (ex, y2))
    if by2 - by1 <= ROW_H:
        return (f'<line x1="{x1}" y1="{by1 + BOX_H}" x2="{x2}" y2="{by2}" stroke="#555" '
                f'stroke-width="1.2" marker-end="url(#a)"/>'), None
    bow = bx1 - 6 - min(30, (by2 - by1) / ROW_H * 4)  # skips rows: bow out left of the lane
    return (f'<path d="M{bx1},{y1} C{bow},{y1} {bow},{y2} {bx2},{y2}" fill="none" '
            f'stroke="#555" stroke-width="1.2" marker-end="url(#a)"/>'), None


def _overlaps(a: tuple, b: tuple, margin: float = 3) -> bool:
    return (a[0] < b[2] + margin and b[0] < a[2] + margin and a[1] < b[3] + margin
            and b[1] < a[3] + margin)


def _label_box(text: str, x: float, y: float) -> tuple:
    """(left, top, right, bottom) of a label centred at (x, y)."""
    half = (len(text) * _CHAR_W + 8) / 2
    return (x - half, y - _LABEL_H / 2, x + half, y + _LABEL_H / 2)


def place_labels(crossings: list[tuple[str, tuple]], boxes: list[tuple]) -> list[tuple[float, float]]:
    """A centre for each crossing's label (text, (start, end)) on its line,
    clear of the boxes and of the labels placed before it; failing that,
    the first spot moved down until it is clear of the other labels."""
    placed: list[tuple] = []
    centres = []
    for text, ((sx, sy), (ex, ey)) in crossings:
        spots = [(sx + t * (ex - sx), sy + t * (ey - sy)) for t in _LABEL_SPOTS]
        free = [p for p in spots
                if not any(_overlaps(_label_box(text, *p), o) for o in placed + boxes)]
        x, y = free[0] if free else spots[0]
        while any(_overlaps(_label_box(text, x, y), o) for o in placed):
            y += _LABEL_H + 2
        placed.append(_label_box(text, x, y))
        centres.append((x, y))
    return centres


def graph_svg(done: Report, record: ModuleRecord) -> str:
    graph = done.graph
    labels = _edge_bytes(done, record)
    lanes = list(graph.devices)
    x_of = {d: 40 + i * LANE_W for i, d in enumerate(lanes)}
    rows, titles, n_rows = _svg_rows(graph)
    width = 40 + (len(lanes) - 1) * LANE_W + BOX_W + 40
    height = TOP + n_rows * ROW_H + 30
    parts = _svg_frame(graph, lanes, x_of, titles, width, height)
    boxes, corner = _svg_boxes(graph, lanes, x_of, rows)
    parts += boxes
    crossings = []
    for i, e in enumerate(graph.edges):
        line, ends = _svg_edge(e, corner)
        parts.append(line)
        if ends is not None:
            crossings.append((f"{labels.get(i, e.bytes)} B · {e.strategy}", ends))
    node_boxes = [(x, y, x + BOX_W, y + BOX_H) for _, _, x, y in corner.values()]
    # Labels last, each on a white ground, so no line is drawn over one.
    for (text, _), (x, y) in zip(crossings, place_labels(crossings, node_boxes)):
        left, top, right, bottom = _label_box(text, x, y)
        parts.append(f'<rect x="{left:.1f}" y="{top:.1f}" width="{right - left:.1f}" height="{bottom - top:.1f}" '
                     f'rx="3" fill="white" fill-opacity="0.9"/>')
        parts.append(f'<text x="{x:.1f}" y="{y + 4:.1f}" text-anchor="middle" fill="#b35900" '
                     f'font-weight="bold">{html.escape(text)}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def render(path: str, done: Report, record: ModuleRecord, devices, source: str) -> bytes:
    """The bytes of a report or picture, by file extension: what the
    passes did (``done``) and what the stages recorded (``record``)."""
    if path.endswith(".json"):
        return (json.dumps(report_data(done, record, devices), indent=2) + "\n").encode()
    if path.endswith(".md"):
        return report_markdown(report_data(done, record, devices), source).encode()
    if path.endswith(".dot"):
        return graph_dot(done, record).encode()
    if path.endswith(".svg"):
        return graph_svg(done, record).encode()
    raise ValueError(path)
