import http from "node:http";

/**
 * A reverse proxy that passes on only a server's OpenAI API (`/v1/*`), as an nginx
 * `location /v1/` or an auth gateway in front of llama.cpp, Ollama or LM Studio does: every
 * native endpoint (/props, /api/show, /api/ps, /api/v0/models) answers 404.
 */
export async function startV1OnlyProxy(targetUrl: string) {
  const target = new URL(targetUrl);
  const server = http.createServer((req, res) => {
    if (!req.url?.startsWith("/v1/")) {
      req.resume();
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: "not found" }));
      return;
    }
    const upstream = http.request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/v1`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
