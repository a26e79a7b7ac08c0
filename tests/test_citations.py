"""Every citation in the repository resolves inside the repository.

Walks every tracked text file (``git ls-files``) and reports, as ``file:line``:

* a ruling cited as ``§x.y`` or ``§x`` (with or without ``docs/rules.md`` before it; also
  lists such as ``§6.1, §6.2`` and ranges such as ``§5.2–5.3``) that has no heading of its own
  in ``docs/rules.md`` (a heading that starts with that section sign and number);
* a path under ``docs/`` (``docs/protocol.md``, ``docs/protocol.schema.json``, ...) that is not
  a tracked file or folder;
* a section of a document cited by name (``docs/rules.md, "Errors"``) that is not one of that
  document's headings;
* a bare rules or architecture file name in capitals (the files outside the repository the
  project once cited) where ``docs/rules.md`` or ``docs/architecture.md`` is meant.

The checker itself is tested on made-up files with bad citations, so this test can fail.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RULES_DOC = "docs/rules.md"
TEXT_SUFFIXES = (".py", ".md", ".js", ".html", ".css", ".lua", ".toml", ".txt", ".json")

SECTION = "\u00a7"  # the section sign
_NUM = r"\d+(?:\.\d+)?"
# A section sign and a number, optionally a range to another number ("§3.1–3.4").
CITATION = re.compile(SECTION + r"\s?(" + _NUM + r")(?:\s?[\u2013\u2014-]\s?" + SECTION
                      + r"?(" + _NUM + r"))?")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")
SECTION_HEADING = re.compile(r"^" + SECTION + r"(" + _NUM + r")(?:\s|$)")
# A path under docs/, not part of a longer path or URL ("/work/docs/x", "site/docs/x").
DOCS_PATH = re.compile(r"(?<![\w/.\-])docs/[\w\-]+(?:/[\w\-]+)*(?:\.[A-Za-z0-9]+)*")
# A document cited with one of its sections by name: docs/rules.md, "Errors".
NAMED_SECTION = re.compile(r"(docs/[\w\-/]+\.md)`?,?\s+\"([^\"\n]+)\"")
# The old, out-of-repository names, written in capitals and not inside docs/.
OLD_NAMES = re.compile(r"(?<!docs/)\b(?:RULES|ARCHITECTURE)\.md\b")
# JSON files (the generated schema) write the section sign as an escape.
JSON_SECTION_ESCAPE = re.compile(r"\\u00a7", re.IGNORECASE)


@dataclass(frozen=True)
class Repository:
    """What citations may point to.

    Attributes:
        files: tracked file paths (relative, with ``/``).
        folders: every folder that holds a tracked file.
        sections: the section numbers of ``docs/rules.md`` that have a heading (``"4"``,
            ``"4.3"``, ...).
        headings: a document's heading texts (lower case), or None if it is not a document.
    """

    files: frozenset[str]
    folders: frozenset[str]
    sections: frozenset[str]
    headings: Callable[[str], frozenset[str] | None]


def heading_texts(markdown: str) -> list[str]:
    """The texts of a Markdown document's headings, outside fenced code blocks, without the
    ``#`` marks and backticks."""
    found: list[str] = []
    fenced = False
    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        match = None if fenced else HEADING.match(line)
        if match:
            found.append(match.group(1).replace("`", "").strip())
    return found


def rule_sections(markdown: str) -> frozenset[str]:
    """Section numbers with a heading of their own (``## §4 The show`` gives ``"4"``)."""
    out = set()
    for text in heading_texts(markdown):
        match = SECTION_HEADING.match(text)
        if match:
            out.add(match.group(1))
    return frozenset(out)


def cited_sections(line: str) -> list[str]:
    """Every section number a line cites; a range ``§3.1–3.4`` gives 3.1, 3.2, 3.3, 3.4."""
    line = JSON_SECTION_ESCAPE.sub(SECTION, line)
    out: list[str] = []
    for match in CITATION.finditer(line):
        start, end = match.group(1), match.group(2)
        out.append(start)
        if end is None:
            continue
        a, b = start.split("."), end.split(".")
        if len(a) == 2 and len(b) == 2 and a[0] == b[0] and int(a[1]) < int(b[1]):
            out += [f"{a[0]}.{k}" for k in range(int(a[1]) + 1, int(b[1]) + 1)]
        else:
            out.append(end)
    return out


def check_text(path: str, text: str, repo: Repository) -> list[str]:
    """The citations of one file that do not resolve, as ``"path:line: what"``."""
    problems: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        where = f"{path}:{number}"
        for section in cited_sections(line):
            if section not in repo.sections:
                problems.append(f"{where}: {SECTION}{section} is not a section of {RULES_DOC}")
        for match in DOCS_PATH.finditer(line):
            cited = match.group(0)
            if cited not in repo.files and cited not in repo.folders:
                problems.append(f"{where}: {cited} does not exist")
        for match in NAMED_SECTION.finditer(line):
            document, name = match.group(1), match.group(2)
            known = repo.headings(document)
            if known is not None and name.strip().lower() not in known:
                problems.append(f'{where}: {document} has no section "{name}"')
        for match in OLD_NAMES.finditer(line):
            problems.append(
                f"{where}: {match.group(0)} is not in the repository; cite docs/"
                f"{match.group(0).lower()}"
            )
    return problems


def tracked_files() -> list[str]:
    """``git ls-files`` of the repository (fails the test if git cannot list them)."""
    done = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60
    )
    return [p for p in done.stdout.decode("utf-8").split("\0") if p]


def folders_of(files: Iterable[str]) -> frozenset[str]:
    """Every folder (relative path) that holds one of ``files``, at any depth."""
    out = set()
    for path in files:
        parts = path.split("/")[:-1]
        for k in range(1, len(parts) + 1):
            out.add("/".join(parts[:k]))
    return frozenset(out)


def repository(files: list[str]) -> Repository:
    """The citation targets of the working tree's tracked files."""
    tracked = frozenset(files)

    def headings(document: str) -> frozenset[str] | None:
        if document not in tracked or not document.endswith(".md"):
            return None
        text = (ROOT / document).read_text(encoding="utf-8")
        return frozenset(h.lower() for h in heading_texts(text))

    rules = (ROOT / RULES_DOC).read_text(encoding="utf-8")
    return Repository(tracked, folders_of(tracked), rule_sections(rules), headings)


def test_every_citation_resolves() -> None:
    files = tracked_files()
    assert RULES_DOC in files and "docs/architecture.md" in files
    repo = repository(files)
    assert {str(k) for k in range(1, 8)} <= repo.sections, "docs/rules.md lacks §1..§7"
    checked = [p for p in files if p.endswith(TEXT_SUFFIXES) and (ROOT / p).is_file()]
    assert len(checked) > 50, checked  # the walk really covers the repository
    problems: list[str] = []
    citations = 0
    for path in checked:
        text = (ROOT / path).read_text(encoding="utf-8", errors="replace")
        citations += sum(len(cited_sections(line)) for line in text.splitlines())
        problems += check_text(path, text, repo)
    assert citations > 100, f"only {citations} section citations found: is the regex broken?"
    assert not problems, "citations that do not resolve:\n" + "\n".join(problems)


# --- The checker on made-up files -------------------------------------------------------

FAKE_RULES = "\n".join([
    "# Rules", "## " + SECTION + "1 Table", "### " + SECTION + "1.1 Seats",
    "### " + SECTION + "1.2 Sides", "## " + SECTION + "4 The show",
    "### " + SECTION + "4.3 The game ends at once", "## Errors", "```", "## " + SECTION
    + "9.9 not a heading: inside a code block", "```",
])


def _fake_repo() -> Repository:
    files = frozenset(["docs/rules.md", "docs/protocol.md", "engine/x.py"])
    docs = {"docs/rules.md": FAKE_RULES}

    def headings(document: str) -> frozenset[str] | None:
        text = docs.get(document)
        return None if text is None else frozenset(h.lower() for h in heading_texts(text))

    return Repository(files, folders_of(files), rule_sections(FAKE_RULES), headings)


def test_checker_reports_each_kind_of_bad_citation() -> None:
    s = SECTION
    old_rules, old_arch = "RULES" + ".md", "ARCHITECTURE" + ".md"
    missing = "docs/" + "asyncapi.json"
    fake = "\n".join([
        f'"""Ends the game at once (docs/rules.md {s}4.3)."""',        # 1 fine
        f"# seats (docs/rules.md {s}1.1, {s}1.2) and sides ({s}1)",     # 2 fine
        f"# the show ({s}4.4)",                                         # 3 no 4.4
        f"# docs/rules.md {s}9.9 lives only in a code block",           # 4 no 9.9
        f"# a range ({s}1.1–1.3)",                                      # 5 no 1.3
        f"# see {old_rules} {s}4.3 and {old_arch}",                     # 6 old names
        f"# see docs/protocol.md and {missing}",                       # 7 no such file
        '# codes: docs/rules.md, "Errors"; docs/rules.md, "Events"',    # 8 no Events
        '{"description": "played without Muggins (docs/rules.md \\u00a77.4)"}',  # 9 no 7.4
        f"# whole sections: {s}1 and {s}2",                             # 10 no 2
    ])
    problems = check_text("engine/x.py", fake, _fake_repo())
    assert problems == [
        f"engine/x.py:3: {s}4.4 is not a section of docs/rules.md",
        f"engine/x.py:4: {s}9.9 is not a section of docs/rules.md",
        f"engine/x.py:5: {s}1.3 is not a section of docs/rules.md",
        f"engine/x.py:6: {old_rules} is not in the repository; cite docs/rules.md",
        f"engine/x.py:6: {old_arch} is not in the repository; cite docs/architecture.md",
        f"engine/x.py:7: {missing} does not exist",
        'engine/x.py:8: docs/rules.md has no section "Events"',
        f"engine/x.py:9: {s}7.4 is not a section of docs/rules.md",
        f"engine/x.py:10: {s}2 is not a section of docs/rules.md",
    ]


def test_checker_accepts_good_citations() -> None:
    s = SECTION
    fake = "\n".join([
        f"see docs/rules.md {s}4.3, {s}1.1/{s}1.2 and {s}1.1–1.2 ({s}4)",
        'docs/rules.md, "Errors"; `docs/rules.md` "errors"',
        "https://example.org/docs/missing.md and /srv/docs/missing.md are not ours",
        "docs/rules.md. docs/protocol.md, engine/x.py",
    ])
    assert check_text("README.md", fake, _fake_repo()) == []
