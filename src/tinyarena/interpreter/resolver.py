"""Which kernel runs each operator: TFLM's MicroMutableOpResolver, and an all-ops default.

TFLM links only the kernels an application registers (``resolver.AddConv2D()``), and a model
that uses another op fails in AllocateTensors. ``OpResolver`` keeps that contract: ops are added
by name, custom ops may be registered from Python with their own ``Registration``, and a lookup
of a missing op raises ``UnsupportedOpError`` naming the op and where it sits in the model.
"""

from __future__ import annotations

from typing import Iterable, Iterator

from tinyarena.errors import InterpreterError, UnsupportedOpError
from tinyarena.kernels import KERNEL_SETS, MODULES, registration
from tinyarena.kernels.base import Registration
from tinyarena.kernels.catalog import unsupported_op_message
from tinyarena.model.types import Model, Operator


class OpResolver:
    """Op name -> Registration, filled explicitly (``add``) or with every op (``default``).

    ``add`` returns the resolver so registrations chain like TFLM's ``AddXxx()`` calls.
    ``kernel_set`` picks which kernels builtin ops get: "reference" or "cmsis-nn" (TFLM's
    ``kernels/cmsis_nn/`` replacing the ops it has, the reference kernels for the others), as a
    firmware links one set.
    """

    def __init__(self, ops: Iterable[str] = (), kernel_set: str = "reference") -> None:
        if kernel_set not in KERNEL_SETS:
            raise UnsupportedOpError(f"unknown kernel set {kernel_set!r}; choose one of "
                                     f"{', '.join(KERNEL_SETS)}")
        self._kernel_set = kernel_set
        self._registrations: dict[str, Registration] = {}
        self._all_builtins = False
        for name in ops:
            self.add(name)

    @classmethod
    def default(cls, kernel_set: str = "reference") -> OpResolver:
        """A resolver that knows every builtin op tinyarena has a kernel module for."""
        resolver = cls(kernel_set=kernel_set)
        resolver._all_builtins = True
        return resolver

    @property
    def kernel_set(self) -> str:
        return self._kernel_set

    def add(self, name: str, kernel: Registration | None = None) -> OpResolver:
        """Register a builtin op by its schema name (``"CONV_2D"``), or any op with ``kernel``.

        Registering the same name twice is refused, as MicroMutableOpResolver refuses it.
        """
        if not isinstance(name, str) or not name:
            raise InterpreterError(f"op name must be a non-empty string, got {name!r}")
        if name in self._registrations:
            raise InterpreterError(f"op {name} is already registered in this OpResolver")
        if kernel is None:
            if name not in MODULES:
                raise UnsupportedOpError(
                    f"tinyarena has no builtin kernel called {name}; register a custom op with "
                    f"resolver.add({name!r}, Registration(...))", op_name=name)
            kernel = registration(name, self._kernel_set)
        elif not isinstance(kernel, Registration):
            raise InterpreterError(
                f"kernel for {name} must be a tinyarena.kernels.base.Registration, "
                f"got {type(kernel).__name__}")
        self._registrations[name] = kernel
        return self

    def add_custom(self, name: str, kernel: Registration) -> OpResolver:
        """Register a CUSTOM op (matched by its custom code) implemented in Python."""
        return self.add(name, kernel)

    def find(self, name: str) -> Registration | None:
        """The registration for ``name``, or None when this resolver does not know it."""
        found = self._registrations.get(name)
        if found is None and self._all_builtins and name in MODULES:
            try:
                found = registration(name, self._kernel_set)
            except UnsupportedOpError:
                return None
        return found

    def resolve(self, op: Operator, subgraph_index: int = 0) -> Registration:
        """The kernel for ``op``; raises UnsupportedOpError naming the op and its index."""
        found = self.find(op.name)
        if found is None and self._all_builtins:  # every kernel tinyarena has: say why not
            raise UnsupportedOpError(
                f"{op.name} (operator {op.index} of subgraph {subgraph_index}): "
                f"{unsupported_op_message(op.name)}",
                op_name=op.name, op_index=op.index, subgraph_index=subgraph_index)
        if found is None:
            kind = "custom op" if op.is_custom else "op"
            hint = (f"resolver.add({op.name!r})" if op.name in MODULES
                    else f"resolver.add({op.name!r}, Registration(...)) (tinyarena has no "
                         f"kernel of its own for it)")
            raise UnsupportedOpError(
                f"{kind} {op.name} (operator {op.index} of subgraph {subgraph_index}) is not "
                f"registered in the OpResolver; add it with {hint}",
                op_name=op.name, op_index=op.index, subgraph_index=subgraph_index)
        return found

    def resolve_model(self, model: Model) -> tuple[tuple[Registration, ...], ...]:
        """Registrations of every operator, per subgraph; fails on the first missing op."""
        return tuple(
            tuple(self.resolve(op, sg.index) for op in sg.operators) for sg in model.subgraphs
        )

    def resolve_name(self, name: str) -> Registration:
        """The registration for op ``name``; raises UnsupportedOpError when it is missing."""
        return self.registration(name)

    def registration(self, name: str) -> Registration:
        """Lookup by name, as ``arena.allocator.allocate_model`` asks its resolver."""
        found = self.find(name)
        if found is None:
            hint = (f"resolver.add({name!r})" if name in MODULES
                    else f"resolver.add({name!r}, Registration(...)) (tinyarena has no kernel "
                         f"of its own for it)")
            raise UnsupportedOpError(
                f"op {name} is not registered in the OpResolver; add it with {hint}",
                op_name=name)
        return found

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.find(name) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def names(self) -> list[str]:
        """Registered op names (for the default resolver: every builtin with a kernel module)."""
        names = set(self._registrations)
        if self._all_builtins:
            names.update(MODULES)
        return sorted(names)

    def __repr__(self) -> str:
        ks = "" if self._kernel_set == "reference" else f"kernel_set={self._kernel_set!r}"
        if self._all_builtins:
            return f"OpResolver.default({ks}) + {sorted(self._registrations)}"
        return f"OpResolver({sorted(self._registrations)}{', ' + ks if ks else ''})"
