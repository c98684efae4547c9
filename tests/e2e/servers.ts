/**
 * The servers e2e specs run against, each a production build on its own fresh store: the main
 * one with open registration (specs register users freely), and one in the default approval
 * mode for the registration spec.
 */
// E2E_PORT_BASE moves every port at once, so two checkouts can run the suite side by side.
const BASE = Number(process.env.E2E_PORT_BASE ?? 3100);
export const MAIN_PORT = BASE;
export const APPROVAL_PORT = BASE + 1;
export const MAIN_FAKE_PORT = BASE + 99;
export const APPROVAL_FAKE_PORT = BASE + 98;

export const MAIN_URL = `http://127.0.0.1:${MAIN_PORT}`;
export const APPROVAL_URL = `http://127.0.0.1:${APPROVAL_PORT}`;
/** Two more instances, on Postgres and Redis, for the lifecycle spec (lifecycle.spec.ts). */
export const INSTANCE_A_PORT = BASE + 10;
export const INSTANCE_B_PORT = BASE + 11;
/** One more, with background compaction on (background-compaction.spec.ts). */
export const BACKGROUND_PORT = BASE + 12;
/** One more, with Tier 1 inside the turn and a summarizer slow enough to stop (stop-compaction.spec.ts). */
export const STOP_COMPACTION_PORT = BASE + 13;
/** One more, with the wrong-password limit per account on (sign-in-lockout.spec.ts). */
export const SIGN_IN_LOCKOUT_PORT = BASE + 14;
/** One more, on a Postgres database the spec fills with accounts (admin-users.spec.ts). */
export const ADMIN_USERS_PORT = BASE + 15;
