"""Strict structure hooks for unions.

Members are narrowed by the JSON kind of the value (``int | str`` never tries ``str`` on a
number); among JSON objects, members carrying a tag (``type`` of content blocks, ``mode``
of URL elicitation) are chosen by the tag's value with one dict lookup.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cattrs

from ._errors import InvalidValue, with_attribute_note
from ._plan import MISSING, plan_for_class
from ._types import (
    JSON_KINDS,
    NoneType,
    describe,
    is_attrs,
    is_union,
    json_kinds,
    union_members,
)

__all__ = ["TagTable", "UnionHooks"]

Hook = Callable[[Any, Any], Any]
#: The tag key of a union whose objects its tag alone picks, and each string tag
#: value's member with that member's hook (see :meth:`UnionHooks.tag_table`).
TagTable = tuple[str, dict[str, tuple[Any, Hook]]]


class UnionHooks:
    """The union hook factory of one converter (*hook_for* as in ``StrictHooks``)."""

    def __init__(self, hook_for: Callable[[Any], Hook]) -> None:
        self._hook_for = hook_for

    def union(self, tp: Any) -> Hook:
        """Members are tried by the JSON kind of the value; among JSON objects, members with
        a tag (``type`` of content blocks) are picked by the tag's value. When several
        members fit, the first that structures wins; if none does, the first candidate's
        error is raised (it carries the precise path)."""
        members = union_members(tp)
        none_ok = NoneType in members
        others = [m for m in members if m is not NoneType]
        if len(others) == 1:
            return self._optional(others[0])
        message = f"expected {describe(tp)}"
        by_kind, anything = self._by_kind(others)
        choose_object = _TagChooser(by_kind[dict])
        only = choose_object.only

        def structure_union(value: Any, _: Any) -> Any:
            if value is None and none_ok:
                return None
            cls = value.__class__
            if cls is dict and only is not None:
                # One tag and every object member tagged (content blocks): the member is
                # found here, without the chooser's call; a tag it does not know is the
                # chooser's to report.
                tag = value.get(only[0], MISSING)
                try:
                    chosen = only[1].get((tag.__class__, tag))
                except TypeError:  # an unhashable tag value
                    chosen = None
                if chosen is not None:
                    return chosen[1](value, chosen[0])
            candidates = by_kind.get(cls, anything)
            if cls is dict and choose_object.tagged:
                candidates = choose_object(value)
            if not candidates:
                raise InvalidValue(message)
            first: Exception | None = None
            for member, hook in candidates:
                try:
                    return hook(value, member)
                except Exception as exc:
                    first = first or exc
            assert first is not None
            raise first

        return structure_union

    def tag_table(self, tp: Any) -> TagTable | None:
        """For a union (without ``None``) whose objects one tag picks among members
        that are all tagged (content blocks): the tag key and, by string tag value,
        the member and its hook. An object carrying one of those values is structured
        by the union's hook exactly as by that member's hook (the union's first
        branch), so a container of such objects may call the member's hook directly.
        ``None`` for any other type."""
        if not is_union(tp):
            return None
        members = union_members(tp)
        if NoneType in members or len(members) < 2:
            return None
        by_kind, _ = self._by_kind(list(members))
        only = _TagChooser(by_kind[dict]).only
        if only is None:
            return None
        key, table = only
        return key, {tag: chosen for (cls, tag), chosen in table.items() if cls is str}

    def _by_kind(
        self, members: list[Any]
    ) -> tuple[dict[type, list[tuple[Any, Hook]]], list[tuple[Any, Hook]]]:
        return _by_kind([(m, self._hook_for(m)) for m in members])

    def _optional(self, tp: Any) -> Hook:
        hook = self._hook_for(tp)
        message = f"expected {describe(tp)} or null"
        kinds = json_kinds(tp)

        def structure_optional(value: Any, _: Any) -> Any:
            if value is None:
                return None
            if kinds is not None and value.__class__ not in kinds:
                raise InvalidValue(message)
            return hook(value, tp)

        return structure_optional


def _by_kind(
    entries: list[tuple[Any, Hook]],
) -> tuple[dict[type, list[tuple[Any, Hook]]], list[tuple[Any, Hook]]]:
    """The members (with their hooks) that can read each JSON kind, and those that can
    read any value."""
    by_kind: dict[type, list[tuple[Any, Hook]]] = {k: [] for k in JSON_KINDS}
    anything: list[tuple[Any, Hook]] = []
    for member, hook in entries:
        kinds = json_kinds(member)
        if kinds is None:
            anything.append((member, hook))
        for kind in JSON_KINDS:
            if kinds is None or kind in kinds:
                by_kind[kind].append((member, hook))
    return by_kind, anything


class _TagChooser:
    """Picks the candidates for a JSON object among union members, by tag value."""

    def __init__(self, entries: list[tuple[Any, Hook]]) -> None:
        untagged: list[tuple[Any, Hook]] = []
        tagged: dict[str, dict[Any, tuple[Any, Hook]]] = {}
        for member, hook in entries:
            tags = plan_for_class(member).tags if is_attrs(member) else ()
            if not tags:
                untagged.append((member, hook))
            for tag in tags[:1]:
                tagged.setdefault(tag.wire, {})[(type(tag.tag), tag.tag)] = (member, hook)
        self.tagged = tagged
        self._untagged = untagged
        #: The tag key and its table when there is one tag and no untagged member:
        #: then the tag alone picks the member.
        self.only = next(iter(tagged.items())) if len(tagged) == 1 and not untagged else None
        values = [v for table in tagged.values() for (_, v) in table]
        self._message = "expected one of " + ", ".join(repr(v) for v in values)

    def __call__(self, value: dict[str, Any]) -> list[tuple[Any, Hook]]:
        for key, table in self.tagged.items():
            tag = value.get(key, MISSING)
            try:
                chosen = table.get((tag.__class__, tag))
            except TypeError:
                chosen = None
            if chosen is not None:
                return [chosen, *self._untagged]
        if self._untagged:
            return self._untagged
        key = next(iter(self.tagged))
        problem: Exception = KeyError(key) if key not in value else InvalidValue(self._message)
        raise cattrs.ClassValidationError(
            "While structuring a tagged union",
            [with_attribute_note(problem, key, Any, "union")],
            dict,
        )
