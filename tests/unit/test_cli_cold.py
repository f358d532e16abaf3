"""Cold ``tinyarena size``: it builds only its own parser and imports no optimizer, process
pool or other command's module, and that changes nothing a user sees (issue 13, item 3)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tinyarena.cli import build_parser

from small_models import hello_world_like

SRC = Path(__file__).resolve().parents[2] / "src"

# Modules a plain ``size`` of a model without an offline plan must not import.
NOT_FOR_SIZE = ("tinyarena.optimize.pipeline", "tinyarena.optimize.placement",
                "tinyarena.optimize.reorder", "tinyarena.optimize.safety",
                "tinyarena.optimize.margins", "tinyarena.kernels.catalog",
                "concurrent.futures.process", "tinyarena.cli_run", "tinyarena.cli_whatif",
                "tinyarena.cli_ops", "statistics")


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("no subcommands")


def test_one_command_parser_equals_its_part_of_the_whole() -> None:
    whole = _subparsers(build_parser())
    assert len(whole) >= 10
    for name, full in whole.items():
        alone = _subparsers(build_parser(only=name))
        assert list(alone) == [name]
        assert alone[name].format_help() == full.format_help()
        assert [(a.dest, a.default, a.choices) for a in alone[name]._actions] == \
            [(a.dest, a.default, a.choices) for a in full._actions]


def test_unknown_first_word_gets_every_command() -> None:
    assert set(_subparsers(build_parser(only="no-such-command"))) == \
        set(_subparsers(build_parser()))


def test_size_imports_only_what_it_needs(tmp_path: Path) -> None:
    model = tmp_path / "m.tflite"
    model.write_bytes(hello_world_like(0))
    code = ("import sys, contextlib, io\n"
            "from tinyarena.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
            f"    assert main(['size', {str(model)!r}]) == 0\n"
            "assert 'arena used' in out.getvalue()\n"
            "print('\\n'.join(sorted(sys.modules)))\n")
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          check=False)
    if done.returncode != 0:
        pytest.fail(done.stderr)
    loaded = set(done.stdout.split())
    assert "tinyarena.arena.allocator" in loaded  # it did size the model
    assert not loaded & set(NOT_FOR_SIZE), sorted(loaded & set(NOT_FOR_SIZE))
