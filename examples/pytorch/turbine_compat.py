"""Lets iree-turbine 3.9.0 export with iree-base-compiler 3.13.0.

What it restores: the static ``isinstance`` method of the concrete MLIR
Python classes in ``iree.compiler.ir`` (``IntegerType.isinstance(t)``,
``RankedTensorType.isinstance(t)``, ``OpResult.isinstance(v)``, ...).

Why: iree-base-compiler 3.9.0's MLIR bindings have it on 66 classes, every
concrete Type, Attribute, Value and AffineExpr class; 3.13.0's have it on
none (the bindings cast Python objects to their concrete class themselves,
and the static helpers were dropped). iree-turbine 3.9.0, the newest, still
calls them (``IntegerType.isinstance``, ``RankedTensorType.isinstance``,
``OpResult.isinstance``, ... in its type conversion and custom-op
expansion), so every export that reaches them fails with
``AttributeError: type object 'IntegerType' has no attribute 'isinstance'``.

How: ``C.isinstance(x)`` answered whether ``x`` is an instance of the
MLIR entity ``C`` stands for, whatever Python class ``x`` has (a plain
``ir.Type`` holding an ``i32`` is an IntegerType). The cast constructor
``C(x)``, still in 3.13.0, makes the same check and raises ValueError when
it fails, so the restored helper is ``C(x)`` succeeding. (Python's own
``isinstance(x, C)`` is not the same: it is False for a plain ``ir.Type``
holding an ``i32``.)

Nothing else is changed; a class that has ``isinstance`` keeps its own, so
importing this under iree-base-compiler 3.9.0 does nothing. Import it before
iree.turbine::

    import turbine_compat  # noqa: F401
    from iree.turbine import aot
"""

from __future__ import annotations

import inspect

from iree.compiler import ir


def _isa(cls):
    def isinstance_(other) -> bool:
        try:
            cls(other)
        except ValueError:
            return False
        return True

    isinstance_.__doc__ = f"Whether the argument is a {cls.__name__} (restored by turbine_compat)."
    return staticmethod(isinstance_)


def restore() -> list[str]:
    """Adds ``isinstance`` where it is missing; returns the class names it
    was added to (empty under iree-base-compiler 3.9.0)."""
    bases = (ir.Type, ir.Attribute, ir.Value, ir.AffineExpr)
    # All chosen before any is added: a subclass (F32Type, RankedTensorType)
    # gets its own helper, not the one it would inherit from its base
    # (FloatType, ShapedType).
    missing = [(name, cls) for name, cls in vars(ir).items()
               if inspect.isclass(cls) and issubclass(cls, bases) and cls not in bases
               and not hasattr(cls, "isinstance")]
    for _, cls in missing:
        cls.isinstance = _isa(cls)
    return [name for name, _ in missing]


RESTORED = restore()
