import type { UserStatus } from "@/lib/db/schema";
import { AppError } from "@/lib/errors";
import { ACCOUNT_DISABLED_CODE } from "./return-path";

/** Why a signed-in account may not use Fold yet (or any more): every app route answers 403. */
export function statusError(status: UserStatus): AppError | null {
  if (status === "pending") {
    return new AppError(
      "forbidden:pending_approval",
      "Your account is waiting for an admin's approval.",
    );
  }
  if (status === "disabled") return accountDisabled();
  return null;
}

export const accountDisabled = () =>
  new AppError(ACCOUNT_DISABLED_CODE, "This account is disabled.");
