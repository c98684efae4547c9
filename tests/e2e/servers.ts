/**
 * The servers e2e specs run against, each a production build on its own fresh store: the main
 * one with open registration (specs register users freely), and one in the default approval
 * mode for the registration spec.
 */
export const MAIN_PORT = Number(process.env.E2E_PORT ?? 3100);
export const APPROVAL_PORT = Number(process.env.E2E_APPROVAL_PORT ?? 3101);

export const MAIN_URL = `http://127.0.0.1:${MAIN_PORT}`;
export const APPROVAL_URL = `http://127.0.0.1:${APPROVAL_PORT}`;
