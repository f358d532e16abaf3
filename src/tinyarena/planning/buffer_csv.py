"""Buffer lists from outside a model: MiniMalloc's CSV format.

``id,lower,upper,size``, one buffer per row, live on the half-open interval [lower, upper)
(Google's MiniMalloc and its published benchmarks use it). TFLM's planners use closed
intervals, so a row becomes ``Buffer(size, first=lower, last=upper - 1)``. Rows keep their
order (it is the order TFLM's ``AddBuffer`` would see them in, which the greedy's ties use).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from tinyarena.errors import PlanError
from tinyarena.planning.buffers import Buffer

REQUIRED = ("id", "lower", "upper", "size")


@dataclass(frozen=True)
class BufferTable:
    """The buffers of a CSV file and the id each row gave its buffer."""

    ids: tuple[str, ...]
    buffers: tuple[Buffer, ...]


def read_buffer_csv(source: str | Path) -> BufferTable:
    """Parse a MiniMalloc CSV file; PlanError names the file, line and what to fix."""
    path = Path(source)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise PlanError(f"{path}: no such file; give a CSV with columns "
                        f"{','.join(REQUIRED)}") from None
    except IsADirectoryError:
        raise PlanError(f"{path} is a folder; give a CSV file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PlanError(f"{path}: cannot be read as text ({exc})") from None
    return parse_buffer_csv(text, name=str(path))


def parse_buffer_csv(text: str, name: str = "<csv>") -> BufferTable:
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if header is None:
        raise PlanError(f"{name} is empty; it needs the header {','.join(REQUIRED)}")
    columns = [h.strip().lower() for h in header]
    missing = [c for c in REQUIRED if c not in columns]
    extra = [c for c in columns if c not in REQUIRED]
    if missing:
        raise PlanError(f"{name}: the header lacks {', '.join(missing)}; MiniMalloc's format "
                        f"is {','.join(REQUIRED)} (half-open lifetimes [lower, upper))")
    if extra:
        raise PlanError(f"{name}: column(s) {', '.join(extra)} are not read here (offsets and "
                        f"alignments are not inputs to TFLM's planners); remove them")
    at = {c: columns.index(c) for c in REQUIRED}
    ids: list[str] = []
    buffers: list[Buffer] = []
    seen: set[str] = set()
    for line, row in enumerate(reader, start=2):
        if not row or all(not cell.strip() for cell in row):
            continue
        if len(row) != len(columns):
            raise PlanError(f"{name}, line {line}: {len(row)} fields, the header has "
                            f"{len(columns)}")
        ident = row[at["id"]].strip()
        if ident in seen:
            raise PlanError(f"{name}, line {line}: id {ident!r} appears twice; ids name one "
                            "buffer each")
        seen.add(ident)
        lower, upper, size = (_integer(row[at[c]], c, name, line)
                              for c in ("lower", "upper", "size"))
        if size < 0:
            raise PlanError(f"{name}, line {line}: size {size} is negative")
        if upper <= lower:
            raise PlanError(f"{name}, line {line}: upper {upper} <= lower {lower}; a buffer is "
                            "live on [lower, upper), which must not be empty")
        ids.append(ident)
        buffers.append(Buffer(size, lower, upper - 1))
    if not buffers:
        raise PlanError(f"{name} has a header but no buffers")
    return BufferTable(tuple(ids), tuple(buffers))


def _integer(cell: str, column: str, name: str, line: int) -> int:
    try:
        return int(cell.strip())
    except ValueError:
        raise PlanError(f"{name}, line {line}: {column} {cell.strip()!r} is not a whole "
                        "number") from None


def format_buffer_csv(table: BufferTable) -> str:
    """The same table in MiniMalloc's format (for writing instances)."""
    rows = ["id,lower,upper,size"]
    rows += [f"{i},{b.first},{b.last + 1},{b.size}" for i, b in zip(table.ids, table.buffers)]
    return "\n".join(rows) + "\n"


__all__ = ["BufferTable", "REQUIRED", "format_buffer_csv", "parse_buffer_csv",
           "read_buffer_csv"]
