import http from "node:http";

/**
 * A minimal OpenAI-compatible server that lists one model and answers every chat request with
 * HTTP 200 and the SSE body given: as llama.cpp's, vLLM's or Ollama's server answers a streamed
 * request that fails once its headers went out.
 */
export async function startStreamStub(model: string, sseBody: () => string) {
  let chatRequests = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.method === "GET" && req.url === "/v1/models") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({ object: "list", data: [{ id: model, object: "model", owned_by: "x" }] }),
        );
        return;
      }
      if (req.method === "POST" && req.url === "/v1/chat/completions") {
        chatRequests += 1;
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(sseBody());
        return;
      }
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: "not found" }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/v1`,
    /** Chat requests answered so far. */
    get requests() {
      return chatRequests;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
