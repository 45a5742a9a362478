"""Authorization across processes: a session and a task belong to their principal on
every process, exactly as on one."""

from __future__ import annotations

import trio

import trimcp
from trimcp.store import RedisStore

from ..auth._issuer import Issuer
from ..auth._server import open_session, post, protected_server
from ..http_server._asgi import AsgiClient, rpc
from ._services import RedisServer

_ISSUER = Issuer()


async def test_sessions_and_tasks_serve_only_their_principal_on_every_process(
    redis_server: RedisServer, prefix: str
) -> None:
    apps = []
    for _ in range(2):
        server = protected_server(_ISSUER)
        server.use_store(RedisStore(redis_server.url, prefix=prefix))
        apps.append(trimcp.asgi_app(server))
    alice = _ISSUER.token(sub="alice")
    bob = _ISSUER.token(sub="bob")
    async with trio.open_nursery() as nursery:
        for app in apps:
            await nursery.start(app.run)
        first, second = AsgiClient(apps[0], nursery), AsgiClient(apps[1], nursery)
        session = await open_session(first, alice)
        assert (await post(second, alice, rpc(2, "ping"), session)).status == 200
        assert (await post(second, bob, rpc(3, "ping"), session)).status == 404  # not bob's
        call = {"name": "job", "arguments": {"text": "x"}, "task": {}}
        created = await post(first, alice, rpc(4, "tools/call", call), session)
        task_id = created.json["result"]["task"]["taskId"]
        mine = await post(second, alice, rpc(5, "tasks/get", {"taskId": task_id}), session)
        assert mine.json["result"]["taskId"] == task_id
        bobs = await open_session(second, bob)
        other = await post(second, bob, rpc(6, "tasks/get", {"taskId": task_id}), bobs)
        assert other.json["error"]["code"] == -32602  # another principal's: unknown
        nursery.cancel_scope.cancel()
