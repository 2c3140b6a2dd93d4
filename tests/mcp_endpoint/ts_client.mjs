// The official TypeScript MCP SDK's client against agent-tools/mcp (tests/mcp_endpoint/test_ts_client.py).
//
// node ts_client.mjs SDK_DIR URL TOKEN CALLS_JSON [TIMEOUT_MS]: lists the tools, then makes each call
// ([[name, args], ...]) with `Client.callTool`, which checks each result's structuredContent
// against the tool's outputSchema (with ajv) and throws when it does not match; TIMEOUT_MS is
// each request's timeout (the SDK's default is 60 s, its -32001 "Request timed out"). Prints one JSON
// object: {tools: [{name, outputSchema}], calls: [{name, isError, structuredContent} | {name, thrown}]}.
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [sdk, url, token, callsJson, timeoutMs] = process.argv.slice(2);
const load = (path) => import(pathToFileURL(join(sdk, "dist", "esm", path)).href);
const { Client } = await load("client/index.js");
const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");

const client = new Client({ name: "agent-tools-ts-test", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `token ${token}` } },
});
await client.connect(transport);
const { tools } = await client.listTools();
const calls = [];
for (const [name, args] of JSON.parse(callsJson)) {
  try {
    const result = await client.callTool({ name, arguments: args }, undefined,
      timeoutMs ? { timeout: Number(timeoutMs) } : undefined);
    calls.push({ name, isError: Boolean(result.isError), structuredContent: result.structuredContent });
  } catch (error) {
    calls.push({ name, thrown: String(error && error.message ? error.message : error) });
  }
}
await transport.terminateSession();
await client.close();
process.stdout.write(JSON.stringify({
  tools: tools.map((tool) => ({ name: tool.name, outputSchema: tool.outputSchema ?? null })),
  calls,
}));
