/** Limits shared by the browser and the server. */
export const MESSAGE_MAX_CHARS = 100_000;
