#!/usr/bin/env python3
"""Summarise an MCP conformance harness run and judge it against trimcp's baseline.

Reads every ``checks.json`` the harness wrote under ``--out`` (``OUT/server/...`` and
``OUT/client/...``), the scenario list printed by ``npx conformance list`` (for the
scenario -> spec-version tags), ``conformance/scope.txt`` (which scenarios CI holds
trimcp to) and ``conformance/expected-failures.yml`` (known failures, each with a reason).

A scenario passes when none of its checks is a FAILURE; WARNINGs are counted and shown.
In an in-scope scenario a SKIPPED check fails it too (a check that never ran proves
nothing), unless ``conformance/allowed-skips.yml`` (``--allowed-skips``) lists that check
of that scenario with the reason the harness cannot observe it; a listed skip that no
longer happens is stale and fails the run until the line is removed.
Results of OUT/<mode>-scope (in-scope scenarios run one at a time) take precedence
over those of OUT/<mode> (the --suite all run). A server pass made at one protocol
version's wire (``--spec-version V``, for each V of WIRE_TAGS) lives in OUT/server@V;
its scenarios are named ``<scenario>@V``, and ``server-tag V`` puts those names, not
the default-wire ones, in scope. In client mode, when
.ci/conformance_client_wrap.py recorded the client runs (OUT/client-exits,
OUT/client-scope-exits), an in-scope scenario whose client timed out or exited non-zero
fails too; one listed as ``client-refuses NAME`` (the scenario expects the client to
give up, e.g. a resource mismatch) must instead exit with status 1, a refusal.
Exit status: 0 when every in-scope scenario passed or is listed as expected to fail, and
no listed scenario passed; 1 otherwise; 2 on unusable input (a missing file, a malformed
list, an unknown scenario name).

Stdlib only, Python 3.11. The harness's own exit code is not consulted.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

MODES = ("server", "client")
# Tags whose server scenarios are judged from a pass of their own at that version's wire
# (`--suite all --spec-version V`, OUT/server@V), because without the flag the harness
# runs a scenario first introduced earlier at the 2025-11-25 wire. .ci/conformance runs
# one such pass per entry.
WIRE_TAGS = ("2026-07-28",)
STATUSES = ("SUCCESS", "FAILURE", "WARNING", "INFO", "SKIPPED")

# The harness names each result folder `<prefix>-<scenario>-<ISO timestamp>`, the prefix
# being "server" in server mode and absent in client mode; client scenario names may
# contain "/" (auth/...), which becomes nested folders.
_TIMESTAMP = re.compile(r"-(\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z)$")
# `npx conformance list` prints `  - <name> [<tag>,<tag>]` under a section header.
_LIST_ENTRY = re.compile(r"^\s+- (?P<name>\S+)(?: \[(?P<tags>[^\]]*)\])?\s*$")
_LIST_SECTIONS = {
    "Server scenarios": "server",
    "Client scenarios": "client",
    "Authorization server scenarios": "authorization",
}


class InputError(Exception):
    """The run's inputs cannot be judged (exit 2)."""


@dataclass
class ScenarioResult:
    name: str
    counts: dict[str, int] = field(default_factory=dict)
    failed_checks: list[str] = field(default_factory=list)
    warned_checks: list[str] = field(default_factory=list)
    skipped_checks: list[tuple[str, str]] = field(default_factory=list)  # (check name, label)
    #: In scope only: the SKIPPED checks no allowance covers (each fails the scenario).
    unallowed_skips: list[str] = field(default_factory=list)
    stamp: str = ""
    client_exit: str | None = None  # client mode: why the client run counts as failed

    @property
    def checks(self) -> int:
        return sum(self.counts.values())

    @property
    def failures(self) -> int:
        return self.counts.get("FAILURE", 0)

    @property
    def warnings(self) -> int:
        return self.counts.get("WARNING", 0)

    @property
    def skipped(self) -> int:
        return self.counts.get("SKIPPED", 0)

    @property
    def passed(self) -> bool:
        return self.failures == 0 and not self.unallowed_skips and self.client_exit is None


@dataclass
class Expected:
    name: str
    reason: str
    line: int


@dataclass
class AllowedSkip:
    """One SKIPPED check allowed in an in-scope scenario: ``scenario`` and the check's
    ``name`` (the harness's per-check name; several checks may share an ``id``)."""

    scenario: str
    check: str
    reason: str
    line: int


# ---------------------------------------------------------------------------- parsing


def parse_list(text: str) -> dict[str, dict[str, list[str]]]:
    """Map mode -> scenario -> tags from the output of `npx conformance list`."""
    catalogue: dict[str, dict[str, list[str]]] = {}
    section: str | None = None
    for raw in text.splitlines():
        header = next((m for h, m in _LIST_SECTIONS.items() if raw.startswith(h)), None)
        if header is not None:
            section = header
            catalogue.setdefault(section, {})
            continue
        match = _LIST_ENTRY.match(raw)
        if match and section is not None:
            tags = [t.strip() for t in (match["tags"] or "").split(",") if t.strip()]
            catalogue[section][match["name"]] = tags
    for mode in MODES:
        if not catalogue.get(mode):
            raise InputError(f"scenario list has no {mode} scenarios: is it `conformance list`?")
    return catalogue


def _strip_comment(line: str) -> tuple[str, str]:
    body, _, comment = line.partition("#")
    return body.strip(), comment.strip()


REFUSES = "client-refuses"


def parse_scope(text: str, catalogue: dict[str, dict[str, list[str]]]) -> dict[str, set[str]]:
    """Scope lines: `server-tag TAG`, `client-tag TAG`, `server NAME`, `client NAME`,
    `client-refuses NAME` (in scope; the client must give up: ``scope[REFUSES]``)."""
    scope: dict[str, set[str]] = {mode: set() for mode in (*MODES, REFUSES)}
    for number, raw in enumerate(text.splitlines(), start=1):
        body, _ = _strip_comment(raw)
        if not body:
            continue
        parts = body.split()
        if len(parts) != 2:
            raise InputError(f"scope line {number}: expected `<kind> <value>`, got {raw!r}")
        kind, value = parts
        mode, _, suffix = kind.partition("-")
        if mode not in MODES or suffix not in ("", "tag", "refuses") or kind == "server-refuses":
            raise InputError(f"scope line {number}: unknown kind {kind!r}")
        known = catalogue[mode]
        if suffix == "tag":
            matched = {name for name, tags in known.items() if value in tags}
            if not matched:
                raise InputError(f"scope line {number}: no {mode} scenario is tagged {value!r}")
            if mode == "server" and value in WIRE_TAGS:
                matched = {f"{name}@{value}" for name in matched}
            scope[mode] |= matched
        elif value in known:
            scope[mode].add(value)
            if suffix == "refuses":
                scope[REFUSES].add(value)
        else:
            raise InputError(f"scope line {number}: unknown {mode} scenario {value!r}")
    return scope


def _parse_key(body: str, number: int, what: str = "expected-failures") -> tuple[str, bool]:
    """A top-level `server:` (a list follows) or `server: []` (empty) line."""
    key, _, rest = body.partition(":")
    key, rest = key.strip(), rest.strip()
    if key not in MODES or rest not in ("", "[]"):
        raise InputError(f"{what} line {number}: cannot parse {body!r}")
    return key, rest == ""


def _items(text: str, what: str) -> dict[str, list[tuple[int, str, str]]]:
    """The tiny YAML subset `server:` / `client:` followed by `- item  # reason` lines:
    (line number, item, reason) per mode; the reason is required."""
    items: dict[str, list[tuple[int, str, str]]] = {mode: [] for mode in MODES}
    mode: str | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        body, reason = _strip_comment(raw)
        if not body:
            continue
        if not raw[0].isspace() and not body.startswith("- "):
            key, opens_list = _parse_key(body, number, what)
            mode = key if opens_list else None
            continue
        item = body[2:].strip().strip("'\"") if body.startswith("- ") else ""
        if mode is None or not item:
            raise InputError(f"{what} line {number}: cannot parse {raw!r}")
        if not reason:
            raise InputError(f"{what} line {number}: {item!r} needs a reason (`- item  # why`)")
        if any(seen == item for _, seen, _ in items[mode]):
            raise InputError(f"{what} line {number}: {item!r} is listed twice")
        items[mode].append((number, item, reason))
    return items


def parse_allowed_skips(text: str) -> dict[str, list[AllowedSkip]]:
    """`- scenario check-name  # reason` items under `server:` / `client:`."""
    allowed: dict[str, list[AllowedSkip]] = {mode: [] for mode in MODES}
    for mode, items in _items(text, "allowed-skips").items():
        for number, item, reason in items:
            parts = item.split()
            if len(parts) != 2:
                raise InputError(f"allowed-skips line {number}: expected `- scenario check-name`")
            allowed[mode].append(AllowedSkip(parts[0], parts[1], reason, number))
    return allowed


def parse_expected(text: str) -> dict[str, list[Expected]]:
    """`- name  # reason` items under `server:` / `client:`."""
    expected: dict[str, list[Expected]] = {mode: [] for mode in MODES}
    for mode, items in _items(text, "expected-failures").items():
        for number, name, reason in items:
            if " " in name:
                raise InputError(f"expected-failures line {number}: cannot parse {name!r}")
            expected[mode].append(Expected(name, reason, number))
    return expected


def _scenario_from_dir(mode_dir: Path, result_dir: Path, mode: str) -> tuple[str, str]:
    relative = result_dir.relative_to(mode_dir).as_posix()
    match = _TIMESTAMP.search(relative)
    if match is None:
        raise InputError(f"unexpected result folder name: {result_dir}")
    name = relative[: match.start()]
    if mode == "server":
        if not name.startswith("server-"):
            raise InputError(f"unexpected server result folder name: {result_dir}")
        name = name[len("server-") :]
    return name, match.group(1)


def load_results(mode_dir: Path, mode: str) -> dict[str, ScenarioResult]:
    """Every scenario's latest checks.json under OUT/<mode>."""
    results: dict[str, ScenarioResult] = {}
    for path in sorted(mode_dir.rglob("checks.json")):
        name, stamp = _scenario_from_dir(mode_dir, path.parent, mode)
        try:
            checks = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InputError(f"{path}: unreadable checks.json ({exc})") from exc
        if not isinstance(checks, list):
            raise InputError(f"{path}: checks.json is not a list")
        result = ScenarioResult(name=name, stamp=stamp)
        for check in checks:
            if not isinstance(check, dict):
                raise InputError(f"{path}: a check is not an object")
            status = str(check.get("status", "?"))
            result.counts[status] = result.counts.get(status, 0) + 1
            label = str(check.get("id", "?"))
            message = check.get("errorMessage")
            if message:
                label = f"{label}: {str(message).splitlines()[0][:160]}"
            if status == "FAILURE":
                result.failed_checks.append(label)
            elif status == "WARNING":
                result.warned_checks.append(label)
            elif status == "SKIPPED":
                result.skipped_checks.append((str(check.get("name") or check.get("id")), label))
        previous = results.get(name)
        if previous is None or previous.stamp < stamp:
            results[name] = result
    return results


def apply_client_exits(
    exits_dir: Path,
    results: dict[str, ScenarioResult],
    scope: set[str],
    refuses: frozenset[str] = frozenset(),
) -> None:
    """Mark in-scope client scenarios whose client timed out, failed or left no record.

    The records come from .ci/conformance_client_wrap.py. Only in-scope scenarios are
    held to "exit 0 by itself": some out-of-scope ones expect the client to give up.
    """
    for name in scope:
        result = results.get(name)
        if result is None:
            continue
        path = exits_dir / (name.replace("/", "__") + ".json")
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            result.client_exit = "the client left no exit record (never started, or was killed)"
            continue
        if not isinstance(record, dict):
            raise InputError(f"{path}: exit record is not an object")
        seconds = record.get("seconds")
        if record.get("timed_out"):
            result.client_exit = f"the client did not exit by itself (stopped after {seconds} s)"
        elif name in refuses:
            if record.get("exit_code") != 1:
                code = record.get("exit_code")
                result.client_exit = f"the client should have refused (status 1), got {code}"
        elif record.get("exit_code") != 0:
            result.client_exit = f"the client exited with status {record.get('exit_code')}"


def _load_run(
    out: Path, folder: str, mode: str, scope: set[str], refuses: frozenset[str] = frozenset()
) -> dict[str, ScenarioResult]:
    run_dir = out / folder
    results = load_results(run_dir, mode) if run_dir.is_dir() else {}
    exits_dir = out / f"{folder}-exits"
    if mode == "client" and exits_dir.is_dir():
        apply_client_exits(exits_dir, results, scope, refuses)
    return results


def load_mode(
    out: Path, mode: str, scope: set[str], refuses: frozenset[str] = frozenset()
) -> tuple[dict[str, ScenarioResult], list[str]]:
    """A mode's results: OUT/<mode> (the --suite all run), where OUT/<mode>-scope holds
    a solo run of an in-scope scenario, that solo result replaces the suite one.

    Client scenarios of a suite run all start at once (48 clients on 2 cores here), so
    the in-scope ones are judged from runs made one at a time; a difference between the
    two is reported as a note.
    """
    results = _load_run(out, mode, mode, scope, refuses)
    if mode == "server":
        for version in WIRE_TAGS:
            wire = _load_run(out, f"{mode}@{version}", mode, scope)
            for name, result in wire.items():
                result.name = f"{name}@{version}"
                results[result.name] = result
    solo = _load_run(out, f"{mode}-scope", mode, scope, refuses)
    notes = []
    for name in sorted(scope & solo.keys()):
        suite = results.get(name)
        if suite is not None and suite.passed != solo[name].passed:
            how = "passed" if suite.passed else "failed"
            why = f" ({suite.client_exit})" if suite.client_exit else ""
            notes.append(f"{name}: {how} in the parallel --suite all run{why}; judged solo")
        results[name] = solo[name]
    return results, notes


# ---------------------------------------------------------------------------- judging


@dataclass
class ModeVerdict:
    mode: str
    results: dict[str, ScenarioResult]
    scope: set[str]
    expected: list[Expected]
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def judge_skips(
    mode: str, results: dict[str, ScenarioResult], scope: set[str], allowed: list[AllowedSkip]
) -> list[str]:
    """Mark each in-scope scenario's SKIPPED checks that no allowance covers (they fail
    it); return the problems of the allowances themselves (out of scope, or stale)."""
    problems: list[str] = []
    for allowance in allowed:
        if allowance.scenario not in scope:
            raise InputError(
                f"allowed-skips line {allowance.line}: {allowance.scenario!r} is not an"
                f" in-scope {mode} scenario"
            )
        result = results.get(allowance.scenario)
        if result is not None and all(n != allowance.check for n, _ in result.skipped_checks):
            problems.append(
                f"{allowance.scenario}: allowed-skips.yml line {allowance.line} allows check"
                f" {allowance.check!r}, which no longer skips: remove the stale entry"
            )
    covered = {(a.scenario, a.check) for a in allowed}
    for name in scope:
        result = results.get(name)
        if result is not None:
            result.unallowed_skips = [
                label for check, label in result.skipped_checks if (name, check) not in covered
            ]
    return problems


def judge(
    mode: str,
    results: dict[str, ScenarioResult],
    scope: set[str],
    expected: list[Expected],
    known: dict[str, list[str]],
    allowed: list[AllowedSkip] | None = None,
) -> ModeVerdict:
    verdict = ModeVerdict(mode, results, scope, expected)
    verdict.problems.extend(judge_skips(mode, results, scope, allowed or []))
    listed = {entry.name: entry for entry in expected}
    for entry in expected:
        base, _, wire = entry.name.partition("@")
        if base not in known or (wire and (mode != "server" or wire not in known[base])):
            raise InputError(
                f"expected-failures line {entry.line}: unknown {mode} scenario {entry.name!r}"
            )
    for name in sorted(scope):
        result = results.get(name)
        if result is None:
            verdict.problems.append(f"{name}: in scope but produced no checks.json (not run?)")
        elif not result.passed and name not in listed:
            why = result.client_exit or (
                f"{result.failures} failing checks, {len(result.unallowed_skips)} skipped"
                " checks no allowance covers"
            )
            verdict.problems.append(f"{name}: FAILED ({why})")
    for name, entry in sorted(listed.items()):
        result = results.get(name)
        if result is None:
            verdict.notes.append(f"{name}: listed as expected failure but was not run")
        elif result.passed:
            verdict.problems.append(
                f"{name}: listed in expected-failures.yml (line {entry.line}) but now passes:"
                " remove the stale entry"
            )
        else:
            verdict.notes.append(f"{name}: failed as expected ({entry.reason})")
    for name, result in sorted(results.items()):
        if name not in scope and name not in listed and not result.passed:
            verdict.notes.append(f"{name}: failed, out of scope ({result.failures} failing checks)")
    return verdict


# ---------------------------------------------------------------------------- output


def _table(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for index, row in enumerate(rows):
        cells = [
            cell.ljust(width) if column == 0 else cell.rjust(width)
            for column, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
        if index == 0:
            lines.append("  ".join("-" * width for width in widths))
    return lines


def _details(verdict: ModeVerdict, listed: set[str], verbose: bool) -> list[str]:
    """One line per failing, warned or skipped check of the scenarios worth showing."""
    lines: list[str] = []
    for name in sorted(verdict.results):
        result = verdict.results[name]
        show = name in verdict.scope or name in listed or verbose
        if not show or (result.passed and not result.warned_checks and not result.skipped_checks):
            continue
        if result.client_exit:
            lines.append(f"  {name}  CLIENT   {result.client_exit}")
        for label in result.failed_checks:
            lines.append(f"  {name}  FAILURE  {label}")
        for label in result.warned_checks:
            lines.append(f"  {name}  WARNING  {label}")
        if name in verdict.scope:
            for label in result.unallowed_skips:
                lines.append(f"  {name}  SKIPPED  {label}  (counts as a failure)")
            allowed = len(result.skipped_checks) - len(result.unallowed_skips)
            if allowed:
                lines.append(f"  {name}  SKIPPED  {allowed} check(s) allowed by allowed-skips.yml")
    return lines


def render(verdict: ModeVerdict, known: dict[str, list[str]], verbose: bool) -> list[str]:
    listed = {entry.name for entry in verdict.expected}
    rows: list[list[str]] = [
        ["scenario", "scope", "result", "checks", "failures", "warnings", "skipped"]
    ]
    totals = {"in": [0, 0, 0, 0, 0, 0], "all": [0, 0, 0, 0, 0, 0]}
    for name in sorted(set(verdict.results) | verdict.scope):
        result = verdict.results.get(name)
        in_scope = name in verdict.scope
        marker = "yes" if in_scope else "-"
        if result is None:
            rows.append([name, marker, "NOT RUN", "-", "-", "-", "-"])
            continue
        if result.passed:
            outcome = "pass" if name not in listed else "PASS (listed!)"
        else:
            outcome = "expected-fail" if name in listed else "FAIL"
        rows.append(
            [
                name,
                marker,
                outcome,
                str(result.checks),
                str(result.failures),
                str(result.warnings),
                str(result.skipped),
            ]
        )
        for key in ("in", "all") if in_scope else ("all",):
            bucket = totals[key]
            bucket[0] += 1
            bucket[1] += int(result.passed)
            bucket[2] += result.checks
            bucket[3] += result.failures
            bucket[4] += result.warnings
            bucket[5] += result.skipped
    lines = [f"=== conformance {verdict.mode} mode ===", *_table(rows), ""]
    for key, label in (("in", "in scope"), ("all", "all run")):
        run, passed, checks, failures, warnings, skipped = totals[key]
        denominator = len(verdict.scope) if key == "in" else run
        not_run = f", {denominator - run} not run" if denominator > run else ""
        lines.append(
            f"{verdict.mode} {label}: {passed}/{denominator} scenarios passed{not_run},"
            f" {checks} checks, {failures} failures, {warnings} warnings, {skipped} skipped"
        )
    lines.append("")
    lines.extend(_details(verdict, listed, verbose))
    if known and verbose:
        lines.append(f"({len(known)} {verdict.mode} scenarios in this harness)")
    return lines


# ---------------------------------------------------------------------------- main


def _read(path: Path, what: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read {what} {path}: {exc}") from exc


def run(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, required=True, help="harness output folder")
    parser.add_argument("--list", type=Path, required=True, help="`conformance list` output")
    parser.add_argument("--scope", type=Path, required=True, help="conformance/scope.txt")
    parser.add_argument("--expected", type=Path, required=True, help="expected-failures.yml")
    parser.add_argument(
        "--allowed-skips", type=Path, help="allowed-skips.yml (none: every skip in scope fails)"
    )
    parser.add_argument(
        "--modes",
        default="server,client",
        help="comma-separated modes that were run (a mode not run is not judged)",
    )
    parser.add_argument("--verbose", action="store_true", help="list out-of-scope checks too")
    parser.add_argument(
        "--print-scope",
        choices=MODES,
        help="print the in-scope scenario names of one mode, one a line, and exit",
    )
    args = parser.parse_args(list(argv) if argv is not None else None)

    try:
        modes = [m.strip() for m in str(args.modes).split(",") if m.strip()]
        unknown = [m for m in modes if m not in MODES]
        if unknown:
            raise InputError(f"unknown mode(s): {', '.join(unknown)}")
        catalogue = parse_list(_read(args.list, "scenario list"))
        scope = parse_scope(_read(args.scope, "scope file"), catalogue)
        if args.print_scope:
            print("\n".join(sorted(scope[args.print_scope])))
            return 0
        expected = parse_expected(_read(args.expected, "expected failures"))
        allowed = (
            parse_allowed_skips(_read(args.allowed_skips, "allowed skips"))
            if args.allowed_skips is not None
            else {mode: [] for mode in MODES}
        )
        verdicts = []
        for mode in modes:
            refuses = frozenset(scope[REFUSES]) if mode == "client" else frozenset()
            results, notes = load_mode(args.out, mode, scope[mode], refuses)
            verdict = judge(
                mode, results, scope[mode], expected[mode], catalogue[mode], allowed[mode]
            )
            verdict.notes[:0] = notes
            verdicts.append(verdict)
    except InputError as exc:
        print(f"conformance summary: ERROR: {exc}", file=sys.stderr)
        return 2

    problems: list[str] = []
    for verdict in verdicts:
        print("\n".join(render(verdict, catalogue[verdict.mode], args.verbose)))
        for note in verdict.notes:
            print(f"note: {verdict.mode}: {note}")
        problems += [f"{verdict.mode}: {p}" for p in verdict.problems]
        print()
    for mode in MODES:
        if mode not in modes:
            print(f"conformance {mode} mode: not run, not judged")
    if problems:
        print("conformance: FAILED")
        for problem in problems:
            print(f"  - {problem}")
        return 1
    print("conformance: OK (every in-scope scenario passed or is an expected failure)")
    return 0


if __name__ == "__main__":
    sys.exit(run())
