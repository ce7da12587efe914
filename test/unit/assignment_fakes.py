"""Shared by the test_assignment_* tests: a cost model with round numbers
(the three seconds the search asks of passes/assignment/cost_model.CostModel)
and small graphs written by hand or at random."""

from __future__ import annotations

import itertools
import random

from mdc.passes.assignment.search import assignment_of
from mdc.passes.assignment.work_graph import Edge, Unit, Weight, WorkGraph

MiB = 1 << 20
HOST, ACC = "cpu", "gpu"


class FakeCost:
    """Seconds from flops and bytes: the host computes at ``host_rate``
    flop/s, the accelerator at ``acc_rate``; every unit also reads its
    ``bytes_moved`` at ``bandwidth``; a crossing costs ``latency`` plus
    bytes over ``link``; a call on a device costs ``call``."""

    def __init__(self, host_rate=1e9, acc_rate=1e11, bandwidth=1e10, link=1e9,
                 latency=1e-5, call=(1e-6, 2e-5)):
        self.rate = {HOST: host_rate, ACC: acc_rate}
        self.bandwidth, self.link, self.latency = bandwidth, link, latency
        self.call = {HOST: call[0], ACC: call[1]}

    def unit_seconds(self, unit, device):
        if unit.op_class == "view":
            return 0.0
        return unit.flops / self.rate[device] + unit.bytes_moved / self.bandwidth

    def crossing_seconds(self, nbytes, source, target):
        return self.latency + nbytes / self.link

    def call_seconds(self, device):
        return self.call[device]


def graph(units, weights=(), edges=(), arguments=1, results=1):
    """A WorkGraph on HOST and ACC with arguments and results on the host."""
    return WorkGraph("main", HOST, ACC, tuple(units), tuple(weights), tuple(edges),
                     (HOST,) * arguments, (HOST,) * results)


def unit(i, flops=1_000_000, bytes_moved=1000, weights=(), pinned=None, op_class="matmul"):
    return Unit(i, f"u{i}", op_class, "f32", flops, bytes_moved, tuple(weights), None, pinned)


def chain(n, value_bytes=1000, weight_bytes=(), flops=None):
    """Units 0..n-1 in a line, argument 0 into unit 0, unit n-1 to result 0;
    unit i reads weight w{i} of weight_bytes[i] where given."""
    weights = [Weight(f"w{i}", b, users=(i,)) for i, b in enumerate(weight_bytes) if b]
    units = [unit(i, flops=(flops[i] if flops else 1_000_000),
                  weights=(f"w{i}",) if i < len(weight_bytes) and weight_bytes[i] else ())
             for i in range(n)]
    edges = ([Edge(("argument", 0), 0, value_bytes)]
             + [Edge(i, i + 1, value_bytes) for i in range(n - 1)]
             + [Edge(n - 1, ("result", 0), value_bytes)])
    return graph(units, weights, edges)


def random_graph(rng: random.Random, n: int, dag: bool) -> WorkGraph:
    """A random chain (or DAG) of n units: random flops, value sizes,
    weights (some read by two units far apart), arguments into any unit,
    results from any unit, an occasional pin; now and then an argument or
    a result that lives on the accelerator (the caller's annotation), and
    an argument returned as it is (an edge with no unit at either end)."""
    units, weights, edges = [], [], []
    readers: dict = {}
    for i in range(n):
        if rng.random() < 0.6:
            name = f"w{i}"
            weights.append(name)
            readers.setdefault(name, []).append(i)
            if i + 2 < n and rng.random() < 0.3:
                readers[name].append(rng.randrange(i + 2, n))
    for i in range(n):
        pinned = rng.choice((HOST, ACC)) if rng.random() < 0.1 else None
        names = tuple(sorted(w for w in weights if i in readers[w]))
        units.append(unit(i, flops=rng.choice((10**5, 10**6, 10**7, 10**8)),
                          bytes_moved=rng.choice((10**3, 10**5, 10**7)),
                          weights=names, pinned=pinned,
                          op_class=rng.choice(("matmul", "gather", "elementwise"))))
    arguments, results = 2, 2
    edges.append(Edge(("argument", 0), 0, rng.choice((64, 4096, MiB))))
    edges.append(Edge(("argument", 1), rng.randrange(n), rng.choice((64, 4096, MiB))))
    if rng.random() < 0.3:  # argument 1 is also returned as it is
        results += 1
        edges.append(Edge(("argument", 1), ("result", 2), edges[-1].bytes))  # the same value
    # Each edge of its own size is a value of its own (Edge.value): a unit's
    # value 0 goes to the next unit, skips and results are further values.
    for i in range(1, n):
        edges.append(Edge(i - 1, i, rng.choice((256, 65536, 4 * MiB))))
        if dag and i >= 2 and rng.random() < 0.5:
            edges.append(Edge(rng.randrange(i - 1), i, rng.choice((256, 65536, 4 * MiB)), value=i))
    edges.append(Edge(n - 1, ("result", 0), rng.choice((64, 4096)), value=n))
    edges.append(Edge(rng.randrange(n), ("result", 1), rng.choice((64, 4096)), value=n + 1))
    weight_list = [Weight(name, rng.choice((MiB, 8 * MiB, 16 * MiB)), users=tuple(readers[name]),
                          pinned=rng.choice((HOST, ACC)) if rng.random() < 0.05 else None) for name in weights]
    def caller():
        return ACC if rng.random() < 0.15 else HOST

    return WorkGraph("main", HOST, ACC, tuple(units), tuple(weight_list), tuple(edges),
                     tuple(caller() for _ in range(arguments)), tuple(caller() for _ in range(results)))


def every_assignment(g: WorkGraph):
    """Every assignment of the free units (pins kept), weights by their rule."""
    free = [u.id for u in g.units if u.pinned is None]
    for devices in itertools.product((HOST, ACC), repeat=len(free)):
        units = {u.id: u.pinned for u in g.units if u.pinned}
        units.update(zip(free, devices))
        yield assignment_of(g, units)


def transformer(blocks: int, units_per_block: int = 4, batch_rows: int = 32, residual: bool = False):
    """A transformer-like chain: a gather of ``batch_rows`` rows from a
    64 MiB embedding table, ``blocks`` blocks of ``units_per_block`` units
    reading 16 MiB of weights in all (the first unit of a block reads
    them), and a head matmul with a 64 MiB weight. ``residual``: each
    block's last unit also reads the block's input (a DAG, as real
    transformers are)."""
    hidden = 2048
    row = hidden * 4
    units = [Unit(0, "gather", "gather", "f32", 0, batch_rows * row, ("embedding",))]
    weights = [Weight("embedding", 64 * MiB, users=(0,))]
    for b in range(blocks):
        for k in range(units_per_block):
            i = len(units)
            names = (f"block{b}",) if k == 0 else ()
            flops = 2 * batch_rows * hidden * hidden * (4 if k == 0 else 1)
            units.append(Unit(i, f"block{b}.{k}", "matmul" if k < 2 else "elementwise", "f32",
                              flops, 16 * MiB if k == 0 else batch_rows * row, names))
        weights.append(Weight(f"block{b}", 16 * MiB, users=(len(units) - units_per_block,)))
    head = len(units)
    units.append(Unit(head, "head", "matmul", "f32", 2 * batch_rows * hidden * 8192, 64 * MiB, ("head",)))
    weights.append(Weight("head", 64 * MiB, users=(head,)))
    edges = ([Edge(("argument", 0), 0, batch_rows * 8)]
             + [Edge(i, i + 1, batch_rows * row) for i in range(head)]
             + [Edge(head, ("result", 0), batch_rows * 8192 * 4)])
    if residual:
        edges += [Edge(b * units_per_block, (b + 1) * units_per_block, batch_rows * row) for b in range(blocks)]
    return graph(units, weights, edges)
