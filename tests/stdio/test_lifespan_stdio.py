"""``trimcp serve`` over stdio runs the server's lifespan around the session."""

from __future__ import annotations

import os

import trio

from ._child import HERE, raw_child, serve_argv

LIFESPAN_SERVER = os.path.join(HERE, "lifespan_server.py")


async def test_trimcp_serve_runs_the_lifespan() -> None:
    with trio.fail_after(30):
        async with raw_child(serve_argv(LIFESPAN_SERVER)) as child:
            await child.err.until(b"LIFESPAN enter")
            await child.initialize()
            await child.call(1, "database", {})
            answer = await child.response(1)
            assert answer["result"]["content"][0]["text"] == "db of lifespan-fixture"
            await child.close_stdin()
            errors = b"\n".join(await child.err.rest())
            await child.process.wait()
    assert child.process.returncode == 0
    assert b"LIFESPAN exit" in errors
