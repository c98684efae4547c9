import { test } from "@playwright/test";
import {
  type FakeOpenAI,
  type StartFakeOpenAIOptions,
  startFakeOpenAI,
} from "../fixtures/fake-openai/server";
import { type Instance, startInstance } from "../helpers/instances";
import { createPostgresDatabase } from "../helpers/postgres";

export type OwnServer = {
  fake: FakeOpenAI;
  server: Instance;
  /** Its Postgres database, for a spec that sets up more than its pages can. */
  databaseUrl: string;
  close: () => Promise<void>;
};

/**
 * A server of its own for a spec whose settings differ from the main e2e server's: the fake
 * provider, a fresh Postgres database and one `next start` instance on `port`, its pages and
 * model list compiled once so timings are a warm server's. `close` undoes all three.
 */
export async function startOwnServer(options: {
  port: number;
  provider: StartFakeOpenAIOptions;
  env?: Record<string, string>;
}): Promise<OwnServer> {
  const fake = await startFakeOpenAI(options.provider);
  const database = await createPostgresDatabase().catch(async (error: unknown) => {
    await fake.close();
    throw error;
  });
  let server: Instance;
  try {
    server = await startInstance({
      port: options.port,
      databaseUrl: database.url,
      providerUrl: fake.url,
      env: options.env,
    });
  } catch (error) {
    await fake.close();
    await database.drop();
    throw error;
  }
  for (const pathname of ["/login", "/register", "/api/models"])
    await fetch(`${server.url}${pathname}`);
  return {
    fake,
    server,
    databaseUrl: database.url,
    close: async () => {
      await server.kill();
      await fake.close();
      await database.drop();
    },
  };
}

/**
 * `startOwnServer` for every test of the spec file that calls it: started before the first,
 * closed after the last. Read `fake` and `url` inside a test.
 */
export function ownServerPerFile(options: Parameters<typeof startOwnServer>[0]) {
  let own: OwnServer | undefined;
  test.beforeAll(async () => {
    test.setTimeout(180_000);
    own = await startOwnServer(options);
  });
  test.afterAll(() => own?.close());
  const started = () => {
    if (!own) throw new Error("the spec's own server has not started");
    return own;
  };
  return {
    get fake() {
      return started().fake;
    },
    get url() {
      return started().server.url;
    },
    get databaseUrl() {
      return started().databaseUrl;
    },
  };
}
