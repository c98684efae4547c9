import { createServer } from "node:http";

/**
 * The web the `memory` benchmark's fetch_url calls reach: a loopback node:http server that
 * serves each planned page as text/plain by its path (a query string is ignored).
 */

export type MemoryPageServer = {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  origin: string;
  /** Pages served so far. */
  readonly served: number;
  close(): Promise<void>;
};

export async function startMemoryPages(
  pages: ReadonlyMap<string, string>,
): Promise<MemoryPageServer> {
  let served = 0;
  const server = createServer((req, res) => {
    const body = pages.get((req.url ?? "/").split("?")[0] ?? "");
    if (body === undefined) {
      res.writeHead(404, { "content-type": "text/plain; charset=utf-8" });
      res.end("not found");
      return;
    }
    served += 1;
    const bytes = Buffer.from(body);
    res.writeHead(200, {
      "content-type": "text/plain; charset=utf-8",
      "content-length": String(bytes.length),
    });
    res.end(bytes);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("page server has no port");
  return {
    origin: `http://127.0.0.1:${address.port}`,
    get served() {
      return served;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
