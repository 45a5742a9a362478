"""Loading skills as SEP-2640 requires of a host: nothing fetched ahead of need, every
read checked against the entry (size, digest, listed at all), the SKILL.md frontmatter
compared field by field, and nothing unverified handed back."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import trimcp
from trimcp.protocol import DYNAMIC_RESOURCES, SkillEntry

from ._support import SKILL_MD, skill, skill_server

WAIT = 30
URI = "skill://pdf-processing/SKILL.md"


def _counting(server: trimcp.Server) -> list[str]:
    """The URIs of the skill files the server is asked to read, in order."""
    reads: list[str] = []
    read = server.skills.read

    def counted(uri: str) -> Any:
        reads.append(uri)
        return read(uri)

    server.skills.read = counted  # type: ignore[method-assign]
    return reads


async def test_listing_and_getting_read_no_file_loading_reads_one() -> None:
    server = skill_server()
    reads = _counting(server)
    with trio.fail_after(WAIT):
        async with trimcp.open_client(server.in_memory()) as client:
            (entry,) = await client.list_all_skills()
            assert await client.get_skill(URI) == entry
            assert reads == []
            loaded = await client.load_skill(entry)
            assert reads == [URI]
            assert loaded.text == SKILL_MD
            assert await loaded.read_text("references/FORMS.md") == "# Forms\n"
            assert await loaded.read("scripts/run.bin") == b"\xff\x00binary"
            assert reads[1:] == [
                "skill://pdf-processing/references/FORMS.md",
                "skill://pdf-processing/scripts/run.bin",
            ]
            by_uri = await client.load_skill(URI)  # looked up with skills/get
            assert by_uri.entry == entry


async def _load_refused(served: trimcp.Skill, match: str, **options: Any) -> list[str]:
    server = skill_server(served)
    reads = _counting(server)
    with trio.fail_after(WAIT):
        async with trimcp.open_client(server.in_memory()) as client:
            (entry,) = await client.list_all_skills()
            with pytest.raises(trimcp.SkillVerificationError, match=match):
                await client.load_skill(entry, **options)
    return reads


async def test_a_tampered_skill_md_is_refused_and_nothing_else_is_read() -> None:
    tampered = skill()
    body = tampered.files["SKILL.md"]
    tampered.files["SKILL.md"] = body.replace(b"Read", b"Eval")  # same size
    assert await _load_refused(tampered, "digest") == [URI]
    padded = skill()
    padded.files["SKILL.md"] = body + b"extra"
    assert await _load_refused(padded, "bytes, the entry says") == [URI]


async def test_a_frontmatter_discrepancy_is_refused() -> None:
    lying = skill()
    frontmatter = {**lying.entry.frontmatter, "description": "Something harmless"}
    lying.entry = dataclasses.replace(lying.entry, frontmatter=frontmatter)
    assert await _load_refused(lying, "frontmatter differs") == [URI]
    typed = skill()
    metadata = {"version": 2.1}  # the file says "2.1", a string
    typed.entry = dataclasses.replace(
        typed.entry, frontmatter={**typed.entry.frontmatter, "metadata": metadata}
    )
    await _load_refused(typed, "differs from the entry's in metadata")


async def test_limits_are_checked_from_the_entry_before_any_read() -> None:
    assert await _load_refused(skill(), "past the limits", max_files=2) == []
    assert await _load_refused(skill(), "past the limits", max_bytes=100) == []


async def test_unlisted_or_escaping_files_are_verification_failures() -> None:
    server = skill_server()
    with trio.fail_after(WAIT):
        async with trimcp.open_client(server.in_memory()) as client:
            loaded = await client.load_skill(URI)
            for path in ("new.md", "../other/SKILL.md", "/etc/passwd", ".", "a/../../x"):
                with pytest.raises(trimcp.SkillVerificationError):
                    await loaded.read(path)
            # The server moves on; the entry the host holds does not.
            server.add_skill(skill(**{"references/FORMS.md": "# Forms, edited\n"}))
            with pytest.raises(trimcp.SkillVerificationError, match="bytes, the entry says"):
                await loaded.read("references/FORMS.md")
            fresh = await client.load_skill(await client.get_skill(URI))
            assert await fresh.read("references/FORMS.md") == b"# Forms, edited\n"


async def test_dynamic_skills_are_declined_unless_allowed() -> None:
    dynamic = skill()
    dynamic.entry = dataclasses.replace(dynamic.entry, resources=DYNAMIC_RESOURCES)
    await _load_refused(dynamic, "not verifiable")
    server = skill_server(dynamic)
    with trio.fail_after(WAIT):
        async with trimcp.open_client(server.in_memory()) as client:
            budget = len(SKILL_MD.encode()) + 15  # room for the invoice (12), not the form (8)
            loaded = await client.load_skill(URI, allow_dynamic=True, max_bytes=budget)
            assert loaded.text == SKILL_MD
            await loaded.read("templates/invoice.md")
            with pytest.raises(trimcp.SkillVerificationError, match="size limit"):
                await loaded.read("references/FORMS.md")


async def test_invalid_entries_are_left_out_and_refused() -> None:
    broken: list[dict[str, Any]] = [
        {"uri": URI, "frontmatter": {"name": "pdf-processing", "description": "d"}},
        {"uri": URI, "frontmatter": {"name": "other", "description": "d"}, "resources": []},
        {"uri": "skill://x/README.md", "frontmatter": {}, "resources": []},
        {
            "uri": URI,
            "frontmatter": {"name": "pdf-processing", "description": "d"},
            "resources": [{"uri": URI, "digest": "sha256:XYZ", "size": 1}],
        },
        {
            "uri": URI,
            "frontmatter": {"name": "pdf-processing", "description": "d"},
            "resources": [
                {"uri": "skill://elsewhere/a", "digest": "sha256:" + "0" * 64, "size": 1}
            ],
        },
    ]
    server = trimcp.Server("liar", declare_resources=True)
    server.add_skill(skill())

    async def listing(_ctx: Any, _params: Any) -> dict[str, Any]:
        return {"skills": [*broken, skill().entry.to_wire()]}

    async def getting(_ctx: Any, _params: Any) -> dict[str, Any]:
        return {"skill": broken[0]}

    server._list_skills = listing  # type: ignore[method-assign,assignment]
    server._get_skill = getting  # type: ignore[method-assign,assignment]
    with trio.fail_after(WAIT):
        async with trimcp.open_client(server.in_memory()) as client:
            page = await client.list_skills()
            assert [e.uri for e in page.skills] == [URI]
            assert len(page.rejected) == len(broken)
            with pytest.raises(trimcp.SkillVerificationError, match="resources is neither"):
                await client.get_skill(URI)


async def test_calls_need_the_declared_extension() -> None:
    server = trimcp.Server("plain", declare_resources=True)
    with trio.fail_after(WAIT):
        async with trimcp.open_client(server.in_memory()) as client:
            assert client.skills_capability() is None
            for call in (client.list_skills(), client.get_skill(URI), client.read_directory(URI)):
                with pytest.raises(trimcp.McpError, match="does not declare"):
                    await call


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    original=st.binary(max_size=64),
    served=st.binary(max_size=64),
)
def test_a_read_is_accepted_exactly_when_its_bytes_are_the_listed_ones(
    original: bytes, served: bytes
) -> None:
    """Whatever a server sends for a listed file, the host hands back only the bytes the
    entry describes, and refuses anything else."""

    async def main() -> None:
        listed = skill(**{"data.bin": original})
        listed.files["data.bin"] = served
        server = skill_server(listed)
        async with trimcp.open_client(server.in_memory()) as client:
            loaded = await client.load_skill(URI)
            if served == original:
                assert await loaded.read("data.bin") == original
            else:
                with pytest.raises(trimcp.SkillVerificationError):
                    await loaded.read("data.bin")

    trio.run(main)


@given(
    st.dictionaries(
        st.text(min_size=1, max_size=8),
        st.none() | st.booleans() | st.integers() | st.text(max_size=8),
        max_size=4,
    )
)
def test_frontmatter_round_trips_through_yaml_with_its_types(extra: dict[str, Any]) -> None:
    """What a server renders as the entry's frontmatter is what a host parses from the
    same SKILL.md: the comparison never refuses an honest skill."""
    import yaml

    body = {"name": "pdf-processing", "description": "d", **{f"k{k}": v for k, v in extra.items()}}
    text = "---\n" + yaml.safe_dump(body, allow_unicode=True) + "---\nbody\n"
    served = trimcp.Skill("pdf-processing", {"SKILL.md": text})
    entry = SkillEntry.from_wire(served.entry.to_wire())
    from trimcp.protocol import parse_frontmatter, same_json

    assert same_json(parse_frontmatter(text), entry.frontmatter)
