/**
 * The TCP peer of each request, stamped where no client can forge it. Next's route handlers see
 * only headers, and Next fills X-Forwarded-For from the socket only when the client sent none,
 * so a client could name any address. Node publishes every incoming request on a diagnostics
 * channel before the server sees it: there, the socket's address replaces whatever the client
 * put in PEER_ADDRESS_HEADER.
 */
import { subscribe } from "node:diagnostics_channel";
import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";

export const PEER_ADDRESS_HEADER = "x-fold-peer-address";
const REQUEST_START_CHANNEL = "http.server.request.start";
// Route bundles and instrumentation may each hold a copy of this module: the flag is per process.
const INSTALLED = Symbol.for("fold.peerAddressStamp");

type RequestStart = { request: IncomingMessage; socket: Socket };
type Holder = { [INSTALLED]?: boolean };

function stamp(message: unknown): void {
  const { request, socket } = message as RequestStart;
  delete request.headers[PEER_ADDRESS_HEADER];
  if (socket.remoteAddress) request.headers[PEER_ADDRESS_HEADER] = socket.remoteAddress;
}

/** Starts stamping this process's HTTP requests; safe to call more than once. */
export function installPeerAddressStamp(): void {
  const holder = globalThis as Holder;
  if (holder[INSTALLED]) return;
  subscribe(REQUEST_START_CHANNEL, stamp);
  holder[INSTALLED] = true;
}

/** Whether PEER_ADDRESS_HEADER can be believed: only once this process strips forged ones. */
export function peerAddressStamped(): boolean {
  return (globalThis as Holder)[INSTALLED] === true;
}
