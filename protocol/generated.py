"""The command line shared by the generated contract documents (``protocol.schema``,
``protocol.asyncapi``, ``protocol.openapi``): write the file, or with ``--check`` fail when
the committed file differs from what the models give today."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path


def write_or_check(
    argv: list[str] | None, description: str, default: Path, render: Callable[[], str],
    module: str,
) -> int:
    """Parse ``--check`` and ``--output`` from ``argv``; write ``render()`` to the output
    file, or compare it with the file. Returns the exit code (1: out of date)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--check", action="store_true", help="fail if the file is out of date")
    parser.add_argument("--output", type=Path, default=default)
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        if current != text:
            sys.stderr.write(f"{args.output} is out of date; run python -m {module}\n")
            return 1
        return 0
    args.output.write_text(text, encoding="utf-8")
    return 0
