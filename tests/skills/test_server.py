"""Serving skills (SEP-2640): entries, skills/get, the SKILL.md resource, directory reads,
pagination, both eras, and the rules a skill is checked against when it is made."""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path
from typing import Any

import pytest
import trio

import trimcp
from trimcp.protocol import MAX_SKILL_RESOURCES, SKILLS_EXTENSION, SkillEntry
from trimcp.wire import INVALID_PARAMS, METHOD_NOT_FOUND

from ._support import FILES, SKILL_MD, skill, skill_server

WAIT = 30


async def _request(
    server: trimcp.Server, method: str, params: dict[str, Any], era: str = "handshake"
) -> Any:
    with trio.fail_after(WAIT):
        async with trimcp.open_client(server.in_memory(), era=era) as client:  # type: ignore[arg-type]
            return await client.request(method, params)


@pytest.mark.parametrize("era", ["handshake", "stateless"])
async def test_entry_digests_sizes_and_reads_agree(era: str) -> None:
    server = skill_server()
    with trio.fail_after(WAIT):
        async with trimcp.open_client(server.in_memory(), era=era) as client:  # type: ignore[arg-type]
            extensions = client.state.server_capabilities.extensions
            assert extensions == {SKILLS_EXTENSION: {"directoryRead": True}}
            assert client.state.server_capabilities.resources is not None
            raw = await client.request("skills/list", {})
            (wire,) = raw["skills"]
            entry = SkillEntry.from_wire(wire)
            assert entry.uri == "skill://pdf-processing/SKILL.md"
            assert entry.frontmatter == {
                "name": "pdf-processing",
                "description": "Extract, fill, and assemble PDF documents",
                "metadata": {"version": "2.1"},
            }
            assert not isinstance(entry.resources, str)
            assert entry.resources[0].uri == entry.uri  # SKILL.md first
            assert {f.uri for f in entry.resources} == {
                f"skill://pdf-processing/{name}" for name in FILES
            }
            for listed in entry.resources:
                read = await client.read_resource(listed.uri)
                (item,) = read.contents
                data = (
                    item.text.encode()
                    if isinstance(item, trimcp.TextResourceContents)
                    else base64.b64decode(item.blob)
                )
                assert len(data) == listed.size
                assert "sha256:" + hashlib.sha256(data).hexdigest() == listed.digest
            got = await client.request("skills/get", {"uri": entry.uri})
            assert got["skill"] == wire
            assert "nextCursor" not in got
            if era == "stateless":
                for result in (raw, got):
                    assert result["resultType"] == "complete"
                    assert {"ttlMs", "cacheScope"} <= result.keys()
            resources = await client.list_all_resources()
            (md,) = resources
            assert (md.uri, md.name, md.mime_type) == (entry.uri, entry.name, "text/markdown")
            assert md.description == entry.description


async def test_directory_reads_children_and_refuses_files() -> None:
    server = skill_server()
    with trio.fail_after(WAIT):
        async with trimcp.open_client(server.in_memory()) as client:
            root = await client.read_directory("skill://pdf-processing")
            kinds = {r.name: r.mime_type for r in root.resources}
            assert kinds == {
                "SKILL.md": "text/markdown",
                "references": "inode/directory",
                "scripts": "inode/directory",
                "templates": "inode/directory",
            }
            templates = await client.read_directory("skill://pdf-processing/templates")
            assert [(r.uri, r.mime_type) for r in templates.resources] == [
                ("skill://pdf-processing/templates/invoice.md", "text/markdown"),
                ("skill://pdf-processing/templates/regional", "inode/directory"),
            ]
            assert templates.resources[0].size == len(FILES["templates/invoice.md"])
            for uri in (
                "skill://pdf-processing/SKILL.md",
                "skill://pdf-processing/templates/",
                "skill://elsewhere",
                "skill://pdf-processing/../pdf-processing",
            ):
                with pytest.raises(trimcp.McpError) as info:
                    await client.read_directory(uri)
                assert info.value.code == INVALID_PARAMS


async def test_nested_skill_paths_list_their_prefix_directories() -> None:
    nested = trimcp.Skill(
        "acme/billing/refunds",
        {"SKILL.md": "---\nname: refunds\ndescription: Refund requests\n---\n", "a/b.md": "x"},
    )
    server = skill_server(skill(), nested)
    with trio.fail_after(WAIT):
        async with trimcp.open_client(server.in_memory()) as client:
            assert [e.uri for e in await client.list_all_skills()] == [
                "skill://pdf-processing/SKILL.md",
                "skill://acme/billing/refunds/SKILL.md",
            ]
            acme = await client.read_directory("skill://acme")
            assert [(r.name, r.mime_type) for r in acme.resources] == [
                ("billing", "inode/directory")
            ]
            refunds = await client.read_directory("skill://acme/billing/refunds")
            assert [r.name for r in refunds.resources] == ["SKILL.md", "a"]


async def test_unknown_skill_and_bad_params_are_invalid_params() -> None:
    server = skill_server()
    for params in (
        {"uri": "skill://nope/SKILL.md"},
        {"uri": "skill://pdf-processing/references/FORMS.md"},
        {"uri": 7},
        {},
    ):
        with pytest.raises(trimcp.McpError) as info:
            await _request(server, "skills/get", params)
        assert info.value.code == INVALID_PARAMS
    with pytest.raises(trimcp.McpError) as info:
        await _request(server, "skills/list", {"cursor": "not-a-cursor"})
    assert info.value.code == INVALID_PARAMS


async def test_pagination_keeps_entries_whole() -> None:
    skills = [
        trimcp.Skill(f"s{i}", {"SKILL.md": f"---\nname: s{i}\ndescription: d\n---\n", "x.md": "x"})
        for i in range(5)
    ]
    server = skill_server(*skills, page_size=2)
    with trio.fail_after(WAIT):
        async with trimcp.open_client(server.in_memory()) as client:
            first = await client.list_skills()
            assert [e.name for e in first.skills] == ["s0", "s1"]
            assert first.next_cursor is not None
            everything = await client.list_all_skills()
            assert [e.name for e in everything] == [f"s{i}" for i in range(5)]
            assert all(
                not isinstance(e.resources, str) and len(e.resources) == 2 for e in everything
            )


async def test_without_skills_nothing_is_declared_or_served() -> None:
    server = trimcp.Server("plain")

    @server.tool()
    async def noop() -> str:
        return ""

    for method in ("skills/list", "skills/get", "resources/directory/read"):
        with pytest.raises(trimcp.McpError) as info:
            await _request(server, method, {"uri": "skill://x/SKILL.md"})
        assert info.value.code == METHOD_NOT_FOUND
    server.add_skill(skill())
    entries = await _request(server, "skills/list", {})
    assert len(entries["skills"]) == 1
    server.remove_skill("skill://pdf-processing/SKILL.md")
    with pytest.raises(trimcp.McpError):
        await _request(server, "skills/list", {})


@pytest.mark.parametrize(
    ("path", "files", "message"),
    [
        ("pdf-processing", {"README.md": "x"}, "has no SKILL.md"),
        ("other-name", FILES, "equal to the last segment"),
        ("Bad_Name", {"SKILL.md": "---\nname: Bad_Name\ndescription: d\n---\n"}, "valid skill"),
        ("pdf-processing", {**FILES, "../escape.md": "x"}, "relative path"),
        ("pdf-processing", {**FILES, "a//b.md": "x"}, "relative path"),
        ("../pdf-processing", FILES, "relative path"),
        ("pdf-processing", {"SKILL.md": "no frontmatter"}, "frontmatter"),
        ("pdf-processing", {"SKILL.md": "---\nname: pdf-processing\n---\n"}, "description"),
        ("pdf-processing", {"SKILL.md": "---\n[1, 2]\n---\n"}, "not a mapping"),
        ("pdf-processing", {"SKILL.md": b"\xff\xfe"}, "SKILL.md"),
    ],
)
def test_a_skill_breaking_the_rules_is_refused(
    path: str, files: dict[str, bytes | str], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        trimcp.Skill(path, files)


def test_the_limits_every_host_accepts_are_enforced() -> None:
    many = {f"f{i}.md": "" for i in range(MAX_SKILL_RESOURCES)}
    with pytest.raises(ValueError, match="more than 512 files"):
        trimcp.Skill("pdf-processing", {**FILES, **many})
    trimcp.Skill("pdf-processing", {"SKILL.md": SKILL_MD, **dict(list(many.items())[:511])})
    big = b"x" * (16 * 1024 * 1024)
    with pytest.raises(ValueError, match="larger than 16777216 bytes"):
        trimcp.Skill("pdf-processing", {**FILES, "big.bin": big})


def test_from_directory_reads_regular_files_only(tmp_path: Path) -> None:
    root = tmp_path / "pdf-processing"
    (root / "references").mkdir(parents=True)
    (root / "SKILL.md").write_text(SKILL_MD)
    (root / "references" / "FORMS.md").write_text("forms")
    secret = tmp_path / "secret.txt"
    secret.write_text("not part of the skill")
    os.symlink(secret, root / "leak.txt")
    os.symlink(tmp_path, root / "loop")
    loaded = trimcp.Skill.from_directory(root)
    assert sorted(loaded.files) == ["SKILL.md", "references/FORMS.md"]
    assert trimcp.Skill.from_directory(root, path="team/pdf-processing").uri == (
        "skill://team/pdf-processing/SKILL.md"
    )
