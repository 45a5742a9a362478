"""Shared tools of the skills tests: a small skill and a server serving it."""

from __future__ import annotations

from typing import Any

import trimcp

SKILL_MD = """---
name: pdf-processing
description: Extract, fill, and assemble PDF documents
metadata:
  version: "2.1"
---
Read `references/FORMS.md` before filling a form.
"""

FILES: dict[str, bytes | str] = {
    "SKILL.md": SKILL_MD,
    "references/FORMS.md": "# Forms\n",
    "templates/invoice.md": "Invoice {n}\n",
    "templates/regional/eu.md": "EU invoice\n",
    "scripts/run.bin": b"\xff\x00binary",
}


def skill(**files: bytes | str) -> trimcp.Skill:
    """The test skill, with ``files`` added or replaced."""
    return trimcp.Skill("pdf-processing", {**FILES, **files})


def skill_server(*skills: trimcp.Skill, **options: Any) -> trimcp.Server:
    server = trimcp.Server("skills-test", version="1.0", **options)
    for one in skills or (skill(),):
        server.add_skill(one)
    return server
