"""A small notes server: tools, resources (static and templated), prompts, completion
and logging, over stdio or HTTP.

    trimcp serve examples/notes/server.py                       # stdio
    trimcp serve --http 127.0.0.1:8765 examples/notes/server.py  # Streamable HTTP

Notes live in memory for the life of the process (a few are there from the start).

- Tools: ``add_note`` (structured output: the new note's id and URI), ``search`` (links
  to the matching notes as ``resource_link`` blocks), ``tag_note`` and ``delete_note``
  (tool annotations say which ones change or destroy data).
- Resources: ``notes://index`` (a Markdown list of every note) and the template
  ``notes://note/{id}`` (one note); clients may subscribe, and get
  ``notifications/resources/updated`` when a note or the index changes.
- Prompts: ``summarize`` (embeds the note in the prompt) and ``find_related``.
- Completion: note ids for the template's ``{id}`` and for the prompts' ``id`` argument,
  tags for ``find_related``'s ``tag``.
- Logging: the ``notes`` logger's records reach the client at its ``logging/setLevel``.
"""

from __future__ import annotations

import logging
from typing import Any

import attrs

import trimcp
from trimcp.protocol import Annotations, PromptMessage, ToolAnnotations

log = logging.getLogger("notes")
log.setLevel(logging.DEBUG)
log.addHandler(trimcp.McpLogHandler())
log.propagate = False

server = trimcp.Server(
    "notes",
    version="1.0",
    title="Notes",
    instructions="A store of short notes: search them, read them as resources, add more.",
)


@attrs.define
class Note:
    id: str
    title: str
    body: str
    tags: list[str] = attrs.field(factory=list)

    @property
    def uri(self) -> str:
        return f"notes://note/{self.id}"

    def markdown(self) -> str:
        tags = " ".join(f"#{tag}" for tag in self.tags)
        return f"# {self.title}\n\n{self.body}\n\n{tags}".rstrip() + "\n"


NOTES: dict[str, Note] = {}
#: At most this many notes are kept; adding more is refused.
MAX_NOTES = 1000


def _seed() -> None:
    for title, body, tags in (
        ("Trio nurseries", "A nursery owns its child tasks; none outlives it.", ["trio"]),
        ("Cancel scopes", "Cancelling a scope cancels everything inside it.", ["trio"]),
        ("MCP sessions", "initialize, then initialized, then requests both ways.", ["mcp"]),
    ):
        note = Note(id=str(len(NOTES) + 1), title=title, body=body, tags=tags)
        NOTES[note.id] = note


_seed()


def _note(id: str) -> Note:
    note = NOTES.get(id)
    if note is None:
        raise trimcp.ToolError(f"no note {id!r}")
    return note


def _changed(note: Note | None = None) -> None:
    server.notify_resource_updated("notes://index")
    if note is not None:
        server.notify_resource_updated(note.uri)


# -- tools ---------------------------------------------------------------------------
@attrs.frozen
class Added:
    id: str
    uri: str


@server.tool(
    title="Add a note",
    annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False),
)
async def add_note(title: str, body: str, tags: list[str] | None = None) -> Added:
    """Add a note; returns its id and resource URI.

    Args:
        title: the note's title.
        body: its text (Markdown).
        tags: words to find it by.
    """
    if len(NOTES) >= MAX_NOTES:
        raise trimcp.ToolError(f"the store is full ({MAX_NOTES} notes)")
    next_id = str(max((int(i) for i in NOTES), default=0) + 1)
    note = Note(id=next_id, title=title, body=body, tags=list(tags or []))
    NOTES[note.id] = note
    log.info("added note %s: %s", note.id, note.title)
    _changed(note)
    return Added(id=note.id, uri=note.uri)


@server.tool(title="Search notes", annotations=ToolAnnotations(read_only_hint=True))
async def search(query: str, limit: int = 10) -> list[trimcp.ResourceLink] | str:
    """Find notes whose title, body or tags contain ``query`` (case-insensitive)."""
    needle = query.lower()
    hits = [
        note
        for note in NOTES.values()
        if needle in note.title.lower()
        or needle in note.body.lower()
        or any(needle in tag for tag in note.tags)
    ][: max(limit, 0)]
    log.debug("search %r: %d hits", query, len(hits))
    if not hits:
        return f"No note matches {query!r}."
    return [
        trimcp.ResourceLink(
            uri=note.uri, name=f"note-{note.id}", title=note.title, mime_type="text/markdown"
        )
        for note in hits
    ]


@server.tool(title="Tag a note", annotations=ToolAnnotations(idempotent_hint=True))
async def tag_note(id: str, tag: str) -> str:
    """Add ``tag`` to a note (adding it twice changes nothing)."""
    note = _note(id)
    if tag not in note.tags:
        note.tags.append(tag)
        _changed(note)
    return f"note {id} tags: {', '.join(note.tags)}"


@server.tool(title="Delete a note", annotations=ToolAnnotations(destructive_hint=True))
async def delete_note(id: str) -> str:
    """Delete a note for good."""
    note = _note(id)
    del NOTES[id]
    log.warning("deleted note %s", id)
    _changed(note)
    return f"deleted note {id}"


# -- resources -----------------------------------------------------------------------
@server.resource(
    "notes://index",
    name="index",
    title="All notes",
    mime_type="text/markdown",
    annotations=Annotations(audience=["user", "assistant"], priority=0.8),
)
async def index() -> str:
    """Every note, one line each."""
    lines = [f"- [{note.title}]({note.uri})" for note in NOTES.values()]
    return "# Notes\n\n" + "\n".join(lines) + "\n"


@server.resource_template("notes://note/{id}", name="note", mime_type="text/markdown")
async def note_resource(id: str) -> str:
    """One note, in Markdown."""
    note = NOTES.get(id)
    if note is None:
        raise trimcp.McpError(-32002, f"Resource not found: notes://note/{id}")
    return note.markdown()


# -- completion ----------------------------------------------------------------------
async def note_ids(value: str, context: Any) -> list[str]:
    return [id for id in NOTES if id.startswith(value)]


async def tags(value: str, context: Any) -> list[str]:
    found = sorted({tag for note in NOTES.values() for tag in note.tags})
    return [tag for tag in found if tag.startswith(value)]


server.completion("resource", "notes://note/{id}", "id")(note_ids)


# -- prompts -------------------------------------------------------------------------
@server.prompt(title="Summarize a note", complete={"id": note_ids})
async def summarize(id: str) -> list[PromptMessage]:
    """Ask for a one-sentence summary of a note."""
    note = NOTES.get(id)
    if note is None:
        raise trimcp.McpError(-32602, f"Invalid params: no note {id!r}")
    resource = trimcp.TextResourceContents(
        uri=note.uri, text=note.markdown(), mime_type="text/markdown"
    )
    return [
        PromptMessage(role="user", content=trimcp.EmbeddedResource(resource=resource)),
        PromptMessage(
            role="user", content=trimcp.TextContent(text="Summarize this note in one sentence.")
        ),
    ]


@server.prompt(title="Find related notes", complete={"tag": tags})
async def find_related(tag: str) -> str:
    """Ask which notes relate to a tag, and why."""
    return f"Which of my notes relate to #{tag}, and how? Use the search tool."
