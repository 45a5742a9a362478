// The official TypeScript SDK client drives 2025-11-25 tasks on a trimcp stdio server.
//
// Usage: node drive_task.mjs <python> <server.py>
// Starts `<python> -m trimcp serve <server.py>` as a child on stdio (no port), then:
// lists the tools, calls `plan` as a task with callToolStream (answering the task's
// elicitation), lists and fetches the task, starts `wait_forever` as a task and cancels
// it. Prints one JSON object with what it saw; the Python test judges it.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [python, serverPath] = process.argv.slice(2);
const seen = { statuses: [], elicitations: [], notices: [] };

const transport = new StdioClientTransport({
  command: python,
  args: ["-m", "trimcp", "serve", serverPath],
  env: { PATH: process.env.PATH ?? "", PYTHONPATH: process.env.PYTHONPATH ?? "" },
  stderr: "inherit",
});
const client = new Client(
  { name: "ts-sdk-task-driver", version: "1.0.0" },
  { capabilities: { elicitation: { form: {} } } },
);
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  seen.elicitations.push({
    message: request.params.message,
    relatedTask: request.params._meta?.["io.modelcontextprotocol/related-task"] ?? null,
  });
  return { action: "accept", content: { name: "Ada" } };
});
client.fallbackNotificationHandler = async (notification) => {
  seen.notices.push(notification.method);
};

const timer = setTimeout(() => {
  console.error("drive_task: timed out");
  process.exit(3);
}, 30000);

try {
  await client.connect(transport);
  seen.protocolVersion = client.getServerVersion() ? "connected" : "none";
  seen.serverTasks = client.getServerCapabilities()?.tasks ?? null;
  const { tools } = await client.listTools();
  seen.taskSupport = Object.fromEntries(
    tools.map((tool) => [tool.name, tool.execution?.taskSupport ?? null]),
  );

  const stream = client.experimental.tasks.callToolStream(
    { name: "plan", arguments: { goal: "ship" } },
    CallToolResultSchema,
    { task: { ttl: 60000 } },
  );
  for await (const message of stream) {
    if (message.type === "taskCreated") {
      seen.created = message.task;
    } else if (message.type === "taskStatus") {
      seen.statuses.push(message.task.status);
    } else if (message.type === "result") {
      seen.result = message.result;
    } else if (message.type === "error") {
      seen.error = String(message.error);
    }
  }
  const taskId = seen.created?.taskId;
  seen.final = await client.experimental.tasks.getTask(taskId);
  seen.listed = (await client.experimental.tasks.listTasks()).tasks.map((t) => t.taskId);

  const created = await client.request(
    { method: "tools/call", params: { name: "wait_forever", arguments: {}, task: {} } },
    (await import("@modelcontextprotocol/sdk/types.js")).CreateTaskResultSchema,
  );
  seen.cancelled = await client.experimental.tasks.cancelTask(created.task.taskId);
  try {
    await client.experimental.tasks.cancelTask(created.task.taskId);
    seen.secondCancel = "accepted";
  } catch (error) {
    seen.secondCancel = error.code ?? String(error);
  }
  try {
    await client.callTool({ name: "plan", arguments: { goal: "x" } });
    seen.plainRequired = "accepted";
  } catch (error) {
    seen.plainRequired = error.code ?? String(error);
  }
} catch (error) {
  seen.fatal = String(error?.stack ?? error);
} finally {
  clearTimeout(timer);
  await client.close();
}
process.stdout.write(JSON.stringify(seen) + "\n");
