"use client";

import { createAuthClient } from "better-auth/react";

/** Browser-side auth calls; same origin as the app. */
export const authClient = createAuthClient();
