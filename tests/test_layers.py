"""The layers import downwards only: engine <- protocol <- server (docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# For each package, the top-level modules it must never import.
FORBIDDEN = {
    "engine": {
        "protocol", "server", "asyncio", "redis", "starlette", "uvicorn", "pydantic",
        "pydantic_settings", "websockets", "msgpack", "jsonpatch", "socket", "requests",
    },
    "protocol": {"server"},
}


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.split(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module.split(".")[0]))
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_import_points_up(package: str) -> None:
    files = sorted((ROOT / package).rglob("*.py"))
    assert files, f"{package}/ has no modules"
    bad = [
        f"{f.relative_to(ROOT)}:{line} imports {name}"
        for f in files
        for line, name in _imports(f)
        if name in FORBIDDEN[package]
    ]
    assert not bad, "\n".join(bad)


def test_engine_uses_only_the_standard_library() -> None:
    import sys

    allowed = set(sys.stdlib_module_names) | {"engine"}
    bad = [
        f"{f.relative_to(ROOT)}:{line} imports {name}"
        for f in sorted((ROOT / "engine").rglob("*.py"))
        for line, name in _imports(f)
        if name not in allowed
    ]
    assert not bad, "\n".join(bad)
