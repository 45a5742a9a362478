"""Source generation for the per-object structure and unstructure functions.

Each object type gets two straight-line Python functions, compiled once: no loops over
fields, no signature inspection, no per-call dispatch for primitive members (their strict
type check is inlined as ``v.__class__ is int``). Other members call the hook the converter
resolved for their type when the function was generated (or, for a member whose type
refers back to a class still being generated, a late-bound ``converter.structure``).
"""

from __future__ import annotations

import itertools
import linecache
import weakref
from collections.abc import Callable
from typing import Any

import attrs
import cattrs

from ._assembly import NO_DEFAULT, SlotWriter, slot_writers
from ._constraints import checked_or_bare
from ._errors import InvalidValue, UnknownFields, with_attribute_note
from ._plan import MISSING, FieldPlan, ObjectPlan
from ._types import (
    ANY_TYPES,
    PRIMITIVES,
    describe,
    is_json_native,
    is_union,
    strip_annotated,
    union_members,
)

__all__ = [
    "GENERATED_STRUCTURE",
    "StructureFn",
    "UnstructureFn",
    "make_structure_fn",
    "make_unstructure_fn",
]

StructureFn = Callable[[Any, Any], Any]
UnstructureFn = Callable[[Any], Any]

_counter = itertools.count()

#: The structure functions generated here. Each raises ``cattrs.ClassValidationError``
#: for every bad input and nothing else (member errors are collected, the build is
#: wrapped), so a caller may use one directly, without the wrapper
#: :func:`._converter.structure` puts around any other hook.
GENERATED_STRUCTURE: weakref.WeakSet[StructureFn] = weakref.WeakSet()


def _compile(name: str, source: str, namespace: dict[str, Any]) -> Any:
    filename = f"<trimcp-generated {name}-{next(_counter)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)
    return namespace[name]


def _primitive_classes(tp: Any) -> tuple[type, ...] | None:
    """The exact classes accepted for *tp* if it is a primitive or a union of primitives."""
    members = union_members(tp) if is_union(tp) else (tp,)
    classes: list[type] = []
    for member in members:
        if member not in PRIMITIVES:
            return None
        classes.append(member)
        if member is float:
            classes.append(int)
    return tuple(dict.fromkeys(classes))


def _missing(name: str) -> KeyError:
    return KeyError(name)


def make_structure_fn(
    plan: ObjectPlan,
    converter: cattrs.Converter,
    build: Callable[..., Any] | None,
    is_late: Callable[[Any], bool],
) -> StructureFn:
    """Generate ``structure(o, _type) -> object`` for *plan*.

    *build* is called with the structured members as keywords; ``None`` returns the
    keyword dict itself (tool parameters). *is_late(tp)* says whether the hook of member
    type *tp* must be looked up at call time because *tp* refers to a class whose hook is
    being generated right now (recursive types).
    """
    ns: dict[str, Any] = {
        "_MISSING": MISSING,
        "_cve": cattrs.ClassValidationError,
        "_invalid": InvalidValue,
        "_note": with_attribute_note,
        "_missing": _missing,
        "_build": build,
        "_owner": plan.owner,
        "_msg": f"While structuring {plan.owner}",
        "_known": plan.known_keys,
        "_fek": UnknownFields,
    }
    writers = slot_writers(build) if isinstance(build, type) else None
    lines = [
        "def structure(o, _type=None):",
        "    if not isinstance(o, dict):",
        "        raise _cve(_msg, [_invalid('expected object')], _build or dict)",
        "    errors = []",
    ]
    if writers is None:
        lines.append("    res = {}")
        targets = {f.attribute: f"res[{f.name!r}]" for f in plan.fields}
        if plan.extra_field is not None:
            targets[plan.extra_field] = f"res[{plan.extra_field!r}]"
    else:
        targets = {w.attribute: f"a{j}" for j, w in enumerate(writers)}
        lines += _initial_values(writers, ns)
    for i, field in enumerate(plan.fields):
        lines.extend(_structure_field(i, field, targets[field.attribute], ns, converter, is_late))
    if plan.extra_field is not None:
        lines += [
            "    extra = {k: v for k, v in o.items() if k not in _known}",
            "    if extra:",
            f"        {targets[plan.extra_field]} = extra",
        ]
    if plan.forbid_extra:
        lines += [
            "    unknown = [k for k in o if k not in _known]",
            "    if unknown:",
            "        errors.append(_fek(set(unknown), _known, _build or dict))",
        ]
    lines += ["    if errors:", "        raise _cve(_msg, errors, _build or dict)"]
    if build is None:
        lines.append("    return res")
    elif writers is not None:
        lines += _slot_writes(writers, ns)
    else:
        lines += [
            "    try:",
            "        return _build(**res)",
            "    except Exception as exc:",
            "        raise _cve(_msg, [exc], _build) from None",
        ]
    structure: StructureFn = _compile("structure", "\n".join(lines) + "\n", ns)
    GENERATED_STRUCTURE.add(structure)
    return structure


def _initial_values(writers: tuple[SlotWriter, ...], ns: dict[str, Any]) -> list[str]:
    """Each attribute's local starts as its plain default, else missing (required, or a
    factory called only when the input left it out)."""
    lines = []
    for j, writer in enumerate(writers):
        default = writer.default
        if default is NO_DEFAULT or isinstance(default, attrs.Factory):  # type: ignore[arg-type]
            lines.append(f"    a{j} = _MISSING")
        else:
            ns[f"_d{j}"] = default
            lines.append(f"    a{j} = _d{j}")
    return lines


def _slot_writes(writers: tuple[SlotWriter, ...], ns: dict[str, Any]) -> list[str]:
    """Build the object as its attrs ``__init__`` would (:func:`._assembly.slot_writers`):
    a bare instance, then every attribute that has a value written through its slot."""
    ns["_new"] = object.__new__
    lines = ["    obj = _new(_build)"]
    for j, writer in enumerate(writers):
        ns[f"_w{j}"] = writer.write
        default = writer.default
        if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
            ns[f"_f{j}"] = default.factory
            lines.append(f"    _w{j}(obj, _f{j}() if a{j} is _MISSING else a{j})")
        elif writer.init or default is not NO_DEFAULT:
            lines.append(f"    _w{j}(obj, a{j})")
    lines.append("    return obj")
    return lines


def _structure_field(
    i: int,
    field: FieldPlan,
    target: str,
    ns: dict[str, Any],
    converter: cattrs.Converter,
    is_late: Callable[[Any], bool],
) -> list[str]:
    tp = checked_or_bare(field.type)  # Annotated kept when its metadata has checks
    ns[f"_t{i}"] = tp
    w = repr(field.wire)  # a str literal in the generated source
    lines = [f"    v = o.get({w}, _MISSING)"]
    if field.required:
        lines += [
            "    if v is _MISSING:",
            f"        errors.append(_note(_missing({w}), {w}, _t{i}, _owner))",
        ]
    else:
        lines += ["    if v is _MISSING:", "        pass"]
    fail = f"errors.append(_note(_invalid(_e{i}), {w}, _t{i}, _owner))"
    if field.is_tag:
        ns[f"_v{i}"] = field.tag
        ns[f"_c{i}"] = type(field.tag)
        ns[f"_e{i}"] = f"expected {field.tag!r}"
        lines += [f"    elif v.__class__ is not _c{i} or v != _v{i}:", f"        {fail}"]
        return lines
    classes = _primitive_classes(tp)
    if tp in ANY_TYPES:
        lines += ["    else:", f"        {target} = v"]
    elif classes is not None:
        ns[f"_e{i}"] = f"expected {describe(tp)}"
        check = " or ".join(f"v.__class__ is _k{i}_{j}" for j in range(len(classes)))
        for j, cls in enumerate(classes):
            ns[f"_k{i}_{j}"] = cls
        lines += [f"    elif {check}:", f"        {target} = v"]
        if int in classes and float not in classes:  # 5.0 is an integer (JSON Schema)
            lines += [
                "    elif v.__class__ is float and v.is_integer():",
                f"        {target} = int(v)",
            ]
        lines += ["    else:", f"        {fail}"]
    else:
        if is_late(tp):
            ns[f"_s{i}"] = converter.structure
        else:
            ns[f"_s{i}"] = converter.get_structure_hook(tp)
        lines += [
            "    else:",
            "        try:",
            f"            {target} = _s{i}(v, _t{i})",
            "        except Exception as exc:",
            f"            errors.append(_note(exc, {w}, _t{i}, _owner))",
        ]
    return lines


def make_unstructure_fn(
    plan: ObjectPlan,
    converter: cattrs.Converter,
    is_late: Callable[[Any], bool],
) -> UnstructureFn:
    """Generate ``unstructure(obj) -> dict`` for *plan* (reads attributes by name, or keys
    for a keyed plan: a ``TypedDict``, whose keys that are not required may be absent).

    Tags are always written; members whose default is ``None`` are left out when ``None``;
    JSON-native members (primitives, ``Any``, lists and dicts of those) are written as they
    are, by reference; extra keys never override known members.
    """
    ns: dict[str, Any] = {}
    literal: list[str] = []
    optional: list[str] = []
    for i, field in enumerate(plan.fields):
        tp = strip_annotated(field.type)
        w = repr(field.wire)
        read = f"obj[{field.attribute!r}]" if plan.keyed else f"obj.{field.attribute}"
        if field.is_tag:
            ns[f"_v{i}"] = field.tag
            literal.append(f"{w}: _v{i}")
            continue
        if is_json_native(tp):
            write = "{}"
        else:
            hook = (lambda v, tp=tp: converter.unstructure(v, tp)) if is_late(tp) else None
            ns[f"_u{i}"] = hook or converter.get_unstructure_hook(tp)
            write = f"_u{i}({{}})"
        if plan.keyed and not field.required:
            optional += [
                f"    if {field.attribute!r} in obj:",
                f"        res[{w}] = {write.format(read)}",
            ]
        elif field.omit_none:
            optional += [
                f"    v = {read}",
                "    if v is not None:",
                f"        res[{w}] = {write.format('v')}",
            ]
        else:
            literal.append(f"{w}: {write.format(read)}")
    lines = ["def unstructure(obj):", "    res = {" + ", ".join(literal) + "}", *optional]
    if plan.extra_field is not None:
        lines += [
            f"    extra = obj.{plan.extra_field}",
            "    if extra:",
            "        for k, v in extra.items():",
            "            if k not in res:",
            "                res[k] = v",
        ]
    lines.append("    return res")
    return _compile("unstructure", "\n".join(lines) + "\n", ns)  # type: ignore[no-any-return]
