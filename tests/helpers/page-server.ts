import { createServer } from "node:http";

/** A local web server for fetch_url to read, which records the path of every visit. */
export type PageServer = {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  url: string;
  /** The path (and query) of each request, oldest first. */
  visits: string[];
  close: () => Promise<void>;
};

/**
 * Starts a page server on a free port: `page` answers each request's path with a body and its
 * content type (HTML unless it says otherwise). Import it inside `vi.hoisted`, next to the fake
 * provider, when fetch_url must reach it (with FETCH_URL_ALLOW_PRIVATE).
 */
export async function startPageServer(
  page: (path: string) => { body: string; contentType?: string },
): Promise<PageServer> {
  const visits: string[] = [];
  const server = createServer((req, res) => {
    const path = req.url ?? "/";
    visits.push(path);
    const { body, contentType = "text/html; charset=utf-8" } = page(path);
    res.writeHead(200, { "content-type": contentType });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    visits,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
