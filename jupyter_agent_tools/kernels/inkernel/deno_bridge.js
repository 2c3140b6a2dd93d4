// In-kernel side of the bridge for Deno: `tool(name, args)` and `ToolError`.
// Injected by the server with __PREFIX__ and __CWD__ filled in. Deno's kernel cannot receive
// comm messages, so a call is a synchronous `prompt()` whose text starts with a reserved
// prefix; the server answers the input request with the result as JSON.
(() => {
  const prefix = __PREFIX__;

  class ToolError extends Error {
    constructor(code, message, data) {
      super(`[${code}] ${message}`);
      this.name = "ToolError";
      this.code = code;
      this.data = data ?? {};
    }
  }

  function tool(name, args = {}) {
    if (typeof name !== "string") throw new TypeError("tool(name, args): name is a string");
    const answer = prompt(prefix + JSON.stringify({ name, args }));
    if (answer === null || answer === "") {
      throw new ToolError("unavailable", "The tool bridge did not answer; run the code through the eval tool of an agent run.");
    }
    const reply = JSON.parse(answer);
    if (!reply.ok) {
      throw new ToolError(reply.error?.code ?? "failed", reply.error?.message ?? reply.text, reply.data);
    }
    return { text: reply.text, data: reply.data, toString: () => reply.text };
  }

  globalThis.tool = tool;
  globalThis.ToolError = ToolError;
  const cwd = __CWD__;
  if (cwd) {
    try { Deno.chdir(cwd); } catch (_) { /* a gateway's kernel may not share the server's disk */ }
  }
})();
