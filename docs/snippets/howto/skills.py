"""Serve a skill, and load it the way a host must: lazily, and verified."""

import trio

import trimcp

SKILL_MD = """---
name: refunds
description: How to refund an order, step by step.
---
Check the order, then follow references/POLICY.md.
"""

server = trimcp.Server("billing")
server.add_skill(  # or a directory on disk: server.add_skill("skills/refunds")
    trimcp.Skill(
        "acme/billing/refunds",
        {"SKILL.md": SKILL_MD, "references/POLICY.md": "Refunds within 30 days.\n"},
    )
)


async def main() -> None:
    async with trimcp.open_client(server.in_memory()) as client:
        entries = await client.list_all_skills()  # entries only: no file is read yet
        for entry in entries:
            print(entry.uri, "-", entry.frontmatter["description"])
        skill = await client.load_skill(entries[0])  # fetches and verifies SKILL.md
        print(skill.text.splitlines()[-1])
        print(await skill.read_text("references/POLICY.md"), end="")  # verified too
        try:
            await skill.read_text("references/MISSING.md")
        except trimcp.SkillVerificationError as exc:
            print("refused:", exc)


if __name__ == "__main__":
    trio.run(main)
