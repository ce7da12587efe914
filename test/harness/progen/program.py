"""A generated program: its arguments, statements and results, its text,
its seeded inputs and its numpy reference."""

from __future__ import annotations

import dataclasses
from typing import Optional

import numpy as np

from .staging import staging_of
from .stmts import Stmt
from .values import DEVICES, FLOATS, Value, zeros_err



@dataclasses.dataclass
class Arg:
    value: Value
    affinity: Optional[str]   # None for index scalars
    data: object              # np.ndarray, or int for an index


@dataclasses.dataclass
class Program:
    seed: int
    index: int
    name: str
    ndevices: int
    model: str                         # IREE execution model
    args: list[Arg]
    stmts: list[Stmt]
    results: list[tuple[Value, str]]   # (value, declared device)
    features: set = dataclasses.field(default_factory=set)

    # -- text -------------------------------------------------------------
    def text(self) -> str:
        out = []
        sig = []
        for a in self.args:
            attr = f" {{iree.abi.affinity = #hal.device.promise<@{a.affinity}>}}" if a.affinity else ""
            sig.append(f"    %{a.value.name}: {a.value.type}{attr}")
        res = ", ".join(f"{v.type} {{iree.abi.affinity = #hal.device.promise<@{d}>}}" for v, d in self.results)
        out.append(f"// progen seed={self.seed} index={self.index} model={self.model}")
        out.append(f"func.func public @{self.name}(\n" + ",\n".join(sig) + f"\n  ) -> ({res}) {{")
        body = [f"%c{i} = arith.constant {i} : index" for i in range(4)]
        for a in self.args:
            v = a.value
            for i, (dy, d) in enumerate(zip(v.dyn, v.dims)):
                if dy:
                    body.append(f"%{d} = tensor.dim %{v.name}, %c{i} : {v.type}")
        for s in self.stmts:
            s.emit(body)
        body.append("return " + ", ".join("%" + v.name for v, _ in self.results) + " : "
                    + ", ".join(v.type for v, _ in self.results))
        out.extend("  " + line for line in body)
        out.append("}")
        return "\n".join(out) + "\n"

    def module_text(self) -> str:
        return self.text()

    # -- numbers ------------------------------------------------------------
    def inputs(self) -> list:
        return [a.data for a in self.args]

    def reference(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """(value, error bound) per result: float64 for floats, int64 for ints."""
        env = self.reference_env()
        return [env[v] for v, _ in self.results]

    def reference_env(self) -> dict:
        env: dict = {}
        for a in self.args:
            if a.value.dtype == "index":
                env[a.value] = (np.int64(a.data), None)
            elif a.value.dtype in FLOATS:
                env[a.value] = (a.data.astype(np.float64), zeros_err(a.data.shape))
            else:
                env[a.value] = (a.data.astype(np.int64), zeros_err(a.data.shape))
        for s in self.stmts:
            s.evaluate(env)
        return env

    @property
    def runner(self) -> str:
        """What runs the mdc-compiled module: mdc-run where stock
        iree-run-module cannot place the arguments, and for every fourth
        program (to exercise the shim too)."""
        return "mdc-run" if self.needs_shim or self.index % 4 == 0 else "iree-run-module"

    def devices(self) -> list[str]:
        """The devices the program names (device_a always: the default)."""
        text = self.text()
        return [d for d in DEVICES if d == "device_a" or f"@{d}>" in text]

    @property
    def needs_shim(self) -> bool:
        """Stock iree-run-module puts every argument on the first device."""
        return any(a.affinity not in (None, "device_a") for a in self.args)

    def describe(self, target: str = "local") -> str:
        lines = [f"seed={self.seed} index={self.index} @{self.name}: devices {', '.join(self.devices())}, {self.model}, "
                 f"--staging={staging_of(self, target)}, features: {', '.join(sorted(self.features))}"]
        for a in self.args:
            d = a.data
            if isinstance(d, np.ndarray):
                lines.append(f"  input %{a.value.name} on {a.affinity}: {d.dtype}{list(d.shape)} = "
                             + np.array2string(d, threshold=64, max_line_width=200).replace("\n", " "))
            else:
                lines.append(f"  input %{a.value.name}: index = {d}")
        return "\n".join(lines)
