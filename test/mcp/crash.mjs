// A minimal MCP server over stdio (newline-delimited JSON-RPC) for the
// tests of failing servers: it answers initialize and tools/list, then
// "crash" exits with code 7 after writing to stderr, and "hang" never
// answers.
import { createInterface } from "node:readline";

const send = (msg) => process.stdout.write(JSON.stringify(msg) + "\n");
const obj = { type: "object", properties: {} };

createInterface({ input: process.stdin }).on("line", (line) => {
  const msg = JSON.parse(line);
  switch (msg.method) {
    case "initialize":
      send({ jsonrpc: "2.0", id: msg.id, result: {
        protocolVersion: msg.params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: "crashy", version: "1" },
      } });
      break;
    case "tools/list":
      send({ jsonrpc: "2.0", id: msg.id, result: { tools: [
        { name: "crash", description: "Exits.", inputSchema: obj },
        { name: "hang", description: "Never answers.", inputSchema: obj },
        { name: "ok", description: "Answers.", inputSchema: obj },
      ] } });
      break;
    case "tools/call":
      if (msg.params.name === "crash") {
        process.stderr.write("crashy: fatal: the tool blew up\n", () => process.exit(7));
      } else if (msg.params.name === "ok") {
        send({ jsonrpc: "2.0", id: msg.id, result: { content: [{ type: "text", text: "fine" }] } });
      }
      break;
    case "ping":
      send({ jsonrpc: "2.0", id: msg.id, result: {} });
      break;
    default:
      if (msg.id !== undefined) {
        send({ jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: "method not found" } });
      }
  }
});
