import net from "node:net";

/**
 * A TCP proxy in front of a real server that can stall: after `stall()` it keeps every
 * connection open and takes what clients send, but forwards nothing either way, as a server
 * that hangs (a paused process, a network that drops packets without closing anything) looks
 * to its clients. `recover()` closes the stalled connections, so clients reconnect through it
 * to the server, which answers again.
 */
export type StallingProxy = {
  url: string;
  stall: () => void;
  recover: () => void;
  close: () => Promise<void>;
};

export async function startStallingProxy(target: {
  host: string;
  port: number;
  protocol: string;
}): Promise<StallingProxy> {
  let stalled = false;
  const pairs = new Set<[net.Socket, net.Socket]>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    const pair: [net.Socket, net.Socket] = [client, upstream];
    pairs.add(pair);
    const forward = (to: net.Socket) => (data: Buffer) => {
      if (!stalled) to.write(data);
    };
    client.on("data", forward(upstream));
    upstream.on("data", forward(client));
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on("close", end).on("error", end);
    upstream.on("close", end).on("error", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  const dropAll = () => {
    for (const [client, upstream] of pairs) {
      client.destroy();
      upstream.destroy();
    }
    pairs.clear();
  };
  return {
    url: `${target.protocol}//127.0.0.1:${port}`,
    stall: () => {
      stalled = true;
    },
    recover: () => {
      dropAll();
      stalled = false;
    },
    close: async () => {
      dropAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A stalling proxy in front of the tests' Redis (TEST_REDIS_URL, else the local one). */
export function startStallingRedis(): Promise<StallingProxy> {
  const redis = new URL(process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379");
  return startStallingProxy({
    host: redis.hostname,
    port: Number(redis.port || 6379),
    protocol: redis.protocol,
  });
}
