"""The documentation pages are true.

* Code on a page is never written on the page: every ``python`` and ``text`` block is
  an include (``--8<--``) of a file under ``docs/snippets/``, and every such file is
  shown on a page and run by a test of this package, which names it.
* ``console`` blocks are run: each ``$ trimcp ...`` command runs in process (in the
  directory :data:`RUN_IN` gives its page), and what it prints, stderr then stdout,
  must be the lines that follow it on the page; ``# exits N`` after a command gives its
  exit status (default 0).
* ``bash`` blocks are commands to copy: each ``trimcp`` command in them must parse with
  the real argument parser, and every file they name must exist.
"""

from __future__ import annotations

import re
import select
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from trimcp.cli import build_parser, main

from ._pages import ROOT, SNIPPETS, Block, blocks, included_text, pages, snippet_files

LANGUAGES = {"python", "text", "console", "bash"}
#: Where the commands and relative paths of a page run (default: the repository root).
RUN_IN = {
    "tutorial/testing.md": SNIPPETS / "tutorial",
    "tutorial/serving.md": SNIPPETS / "tutorial",
    "tutorial/calling.md": SNIPPETS / "tutorial",
    "how-to/auth-server.md": SNIPPETS / "howto",
    "how-to/auth-client.md": SNIPPETS / "howto",
    "how-to/conformance.md": SNIPPETS / "tutorial",
    "how-to/benchmarking.md": SNIPPETS / "tutorial",
    "how-to/shutdown.md": SNIPPETS / "tutorial",
}
#: The address console blocks use for a running HTTP server, and what serves it in tests.
HTTP_URL = "http://127.0.0.1:8000/mcp"
HTTP_SERVER = SNIPPETS / "tutorial" / "serve_http.py"


def _page_dir(block: Block) -> Path:
    return RUN_IN.get(block.page.relative_to(ROOT / "docs").as_posix(), ROOT)


def test_pages_have_code() -> None:
    assert len(pages()) > 20
    assert any(block.lang == "console" for block in blocks())


@pytest.mark.parametrize("block", blocks(), ids=lambda b: b.where)
def test_each_block_is_of_a_checked_kind(block: Block) -> None:
    assert block.lang in LANGUAGES, f"{block.where}: a ```{block.lang} block is checked by nothing"
    if block.lang in ("python", "text"):
        includes = block.includes()
        assert includes, f"{block.where}: code must be included from docs/snippets/, not written"
        for path, section in includes:
            assert (ROOT / path).resolve().is_relative_to(SNIPPETS), f"{block.where}: {path}"
            assert (ROOT / path).is_file(), f"{block.where}: no file {path}"
            assert included_text(path, section).strip(), f"{block.where}: {path}:{section}"


def _tests_text() -> str:
    here = Path(__file__).parent
    return "\n".join(
        p.read_text(encoding="utf-8")
        for p in here.glob("test_*.py")
        if p.name != Path(__file__).name
    )


@pytest.mark.parametrize("path", snippet_files(), ids=lambda p: str(p.relative_to(SNIPPETS)))
def test_each_snippet_is_shown_and_run(path: Path) -> None:
    name = path.relative_to(SNIPPETS).as_posix()
    shown = {
        included
        for block in blocks()
        for included, _ in block.includes()
        if block.lang in ("python", "text")
    }
    assert path.relative_to(ROOT).as_posix() in shown, f"no page shows {name}"
    # A program's printed output (x.txt) is checked by the test that runs x.py.
    names = {name, name.removesuffix(".txt") + ".py"} if name.endswith(".txt") else {name}
    tests = _tests_text()
    assert any(f'"{n}"' in tests for n in names), f"no test in tests/docs names {name!r}"


# ---------------------------------------------------------------------- bash blocks
def _segments(line: str) -> Iterator[list[str]]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    words: list[str] = []
    for word in lexer:
        if word in ("&&", "||", "|", ";", "&"):
            yield words
            words = []
        else:
            words.append(word)
    yield words


def _commands(block: Block) -> Iterator[list[str]]:
    for line in block.body.splitlines():
        for words in _segments(line):
            while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
                words = words[1:]  # VAR=value before a command
            if words:
                yield words


def _trimcp_argv(words: list[str]) -> list[str] | None:
    if words[0] == "trimcp" or words[0].endswith("/trimcp"):
        return words[1:]
    if Path(words[0]).name.startswith("python") and words[1:3] == ["-m", "trimcp"]:
        return words[3:]
    return None


def _named_files(words: list[str]) -> list[str]:
    return [
        word.split(":", 1)[0]
        for word in words
        if "://" not in word and re.search(r"\.py(:\w+)?$", word)
    ]


@pytest.mark.parametrize("block", [b for b in blocks() if b.lang == "bash"], ids=lambda b: b.where)
def test_shell_commands_parse_and_name_real_files(block: Block) -> None:
    for words in _commands(block):
        argv = _trimcp_argv(words)
        if argv is not None:
            try:
                build_parser().parse_args(argv)
            except SystemExit as exc:
                pytest.fail(f"{block.where}: `{shlex.join(words)}` does not parse ({exc})")
        for name in _named_files(words):
            assert (_page_dir(block) / name).exists(), f"{block.where}: no file {name}"


# ---------------------------------------------------------------------- console blocks
def _console(block: Block) -> list[tuple[str, list[str]]]:
    """``(command, expected lines)`` pairs of a console block."""
    runs: list[tuple[str, list[str]]] = []
    for line in block.body.splitlines():
        if line.startswith("$ "):
            runs.append((line[2:], []))
        else:
            assert runs, f"{block.where}: output before any command"
            runs[-1][1].append(line)
    return runs


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    """The tutorial's HTTP server, on a free port, for the commands that name one."""
    process = subprocess.Popen(
        [sys.executable, str(HTTP_SERVER), "0"],
        cwd=HTTP_SERVER.parent,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + 60
        ready, _, _ = select.select([process.stdout], [], [], deadline - time.monotonic())
        assert ready, "the HTTP server did not start"
        yield process.stdout.readline().split()[1]
    finally:
        process.terminate()
        process.wait(timeout=30)
        if process.stdout is not None:
            process.stdout.close()


@pytest.mark.parametrize(
    "block", [b for b in blocks() if b.lang == "console"], ids=lambda b: b.where
)
def test_console_blocks_print_what_the_page_shows(
    block: Block,
    request: pytest.FixtureRequest,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(_page_dir(block))
    for command, expected in _console(block):
        status = re.search(r"#\s*exits (\d+)", command)
        words = shlex.split(command, comments=True)
        argv = _trimcp_argv(words)
        assert argv is not None, f"{block.where}: only trimcp commands run here: {command}"
        if HTTP_URL in argv:
            url = request.getfixturevalue("http_url")
            argv = [url if word == HTTP_URL else word for word in argv]
        if "--" in argv and argv[argv.index("--") + 1] == "python":
            argv[argv.index("--") + 1] = sys.executable
        capfd.readouterr()
        code = main(argv)
        out, err = capfd.readouterr()
        assert code == (int(status[1]) if status else 0), f"{block.where}: {command}\n{err}"
        assert (err + out).splitlines() == expected, f"{block.where}: {command}"


# ---------------------------------------------------------------------- paths and links
def _inline_paths(page: Path) -> set[str]:
    text = FENCE_FREE.sub("", page.read_text(encoding="utf-8"))
    return {
        word
        for code in re.findall(r"`([^`\n]+)`", text)
        for word in code.split()
        if re.fullmatch(r"[\w./-]+/[\w.-]*\.(py|md|yml|txt|html)", word) and "://" not in word
    }


FENCE_FREE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_files_a_page_names_exist(page: Path) -> None:
    """``nursery/_inbound.py``, ``tests/...``, ``examples/...``: the places the pages
    point readers to are real (paths under ``src/trimcp/`` or ``tests/`` may leave that
    prefix out)."""
    for path in _inline_paths(page):
        bases = [ROOT, ROOT / "src" / "trimcp", ROOT / "tests", SNIPPETS]
        assert any((base / path).exists() for base in bases), f"{page}: no file {path}"


def test_the_readme_links_to_pages_that_exist() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\((docs/[^)#]+)", readme)
    assert len(links) > 15
    for link in links:
        assert (ROOT / link).exists(), link


def _named_definitions(page: Path) -> list[tuple[str, str]]:
    """``(path, name)`` for every "`path.py` `Name`" (or `Class.method`) on a page."""
    text = FENCE_FREE.sub("", page.read_text(encoding="utf-8"))
    return re.findall(r"`([\w/]+\.py)` `([A-Za-z_][\w.]*)`", text)


@pytest.mark.parametrize(
    "page", [p for p in pages() if _named_definitions(p)], ids=lambda p: str(p.relative_to(ROOT))
)
def test_what_a_page_names_in_a_module_is_defined_there(page: Path) -> None:
    """ "`nursery/_inbound.py` `InboundRequests._accept_request`" names a function that
    is in that file today."""
    for path, name in _named_definitions(page):
        source = (ROOT / "src" / "trimcp" / path).read_text(encoding="utf-8")
        for part in name.split("."):
            assert re.search(rf"^\s*(async def|def|class) {part}\b|^{part}\b.*=", source, re.M), (
                f"{page}: {path} defines no {part}"
            )


#: Packages with no API reference page: command-line tools, not libraries to call.
NOT_REFERENCED = {"bench", "cli"}


def test_every_public_package_has_a_reference_page() -> None:
    packages = {
        p.parent.name
        for p in (ROOT / "src" / "trimcp").glob("*/__init__.py")
        if not p.parent.name.startswith("_")
    }
    reference = ROOT / "docs" / "reference"
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for package in sorted(packages - NOT_REFERENCED):
        page = reference / f"{package}.md"
        assert page.is_file(), f"trimcp.{package} has no page {page.relative_to(ROOT)}"
        assert f"::: trimcp.{package}" in page.read_text(encoding="utf-8"), page
        assert f"reference/{package}.md" in nav, f"{page.name} is not in mkdocs.yml's nav"
