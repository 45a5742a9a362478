// A host built on the official TypeScript SDK client and the MCP Apps SDK's host-side
// helpers (@modelcontextprotocol/ext-apps): it connects over stdio to the command given
// as arguments, once declaring the io.modelcontextprotocol/ui extension and once not,
// reads what the extension says a host reads (each tool's view URI and visibility, the
// view's resource and its _meta.ui, checked with the extension's own schemas), calls
// `roll`, and prints what it saw as one JSON object.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  getToolUiResourceUri,
  isToolVisibilityAppOnly,
  McpUiResourceMetaSchema,
  McpUiToolMetaSchema,
} from "@modelcontextprotocol/ext-apps/app-bridge";
import {
  EXTENSION_ID,
  getUiCapability,
  RESOURCE_MIME_TYPE,
  RESOURCE_URI_META_KEY,
} from "@modelcontextprotocol/ext-apps/server";

const [command, ...args] = process.argv.slice(2);

async function host(apps) {
  const capabilities = apps
    ? { extensions: { [EXTENSION_ID]: { mimeTypes: [RESOURCE_MIME_TYPE] } } }
    : {};
  const client = new Client({ name: "ts-apps-host", version: "1.0.0" }, { capabilities });
  await client.connect(new StdioClientTransport({ command, args, stderr: "inherit" }));
  const seen = {
    declared: getUiCapability(capabilities) ?? null,
    serverExtensions: client.getServerCapabilities()?.extensions ?? null,
    tools: {},
  };
  const { tools } = await client.listTools();
  for (const tool of tools) {
    const uri = getToolUiResourceUri(tool) ?? null;
    const entry = {
      uri,
      flatKey: tool._meta?.[RESOURCE_URI_META_KEY] ?? null,
      appOnly: isToolVisibilityAppOnly(tool),
    };
    if (tool._meta?.ui !== undefined) {
      entry.toolMetaValid = McpUiToolMetaSchema.safeParse(tool._meta.ui).success;
    }
    if (uri !== null) {
      const { contents } = await client.readResource({ uri });
      entry.viewMimeType = contents[0].mimeType;
      entry.viewStart = (contents[0].text ?? "").slice(0, 15);
      entry.viewMetaValid = McpUiResourceMetaSchema.safeParse(contents[0]._meta?.ui ?? {}).success;
      entry.prefersBorder = contents[0]._meta?.ui?.prefersBorder ?? null;
    }
    seen.tools[tool.name] = entry;
  }
  const rolled = await client.callTool({ name: "roll", arguments: { sides: 6, count: 2 } });
  seen.rolled = rolled.structuredContent;
  seen.rolledText = rolled.content[0].text;
  await client.close();
  return seen;
}

try {
  console.log(JSON.stringify({ apps: await host(true), plain: await host(false) }));
} catch (error) {
  console.log(JSON.stringify({ fatal: String(error?.stack ?? error) }));
  process.exitCode = 1;
}
