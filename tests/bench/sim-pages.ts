import { createServer } from "node:http";
import { type PageSpec, pageBody } from "./sim-plan";

/** The web the `sim` benchmark's fetch_url calls reach: a loopback node:http server. */

export type PageServer = {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  origin: string;
  /** Bytes served so far. */
  readonly bytesServed: number;
  close(): Promise<void>;
};

export async function startPageServer(pages: readonly PageSpec[]): Promise<PageServer> {
  const byPath = new Map(pages.map((page) => [page.path, page]));
  let bytesServed = 0;
  const server = createServer((req, res) => {
    const page = byPath.get((req.url ?? "/").split("?")[0] ?? "");
    if (!page) {
      res.writeHead(404, { "content-type": "text/plain; charset=utf-8" });
      res.end("not found");
      return;
    }
    const body = Buffer.from(pageBody(page));
    bytesServed += body.length;
    res.writeHead(200, {
      "content-type": `${page.kind === "html" ? "text/html" : "text/plain"}; charset=utf-8`,
      "content-length": String(body.length),
    });
    res.end(body);
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
    get bytesServed() {
      return bytesServed;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
