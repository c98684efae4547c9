import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/**
 * Forces `times` full garbage collections, letting each one's performance entries reach their
 * observers before the next (they arrive on a later tick).
 */
export async function collectGarbage(times: number): Promise<void> {
  setFlagsFromString("--expose-gc");
  const collect = runInNewContext("gc") as () => void;
  for (let i = 0; i < times; i++) {
    collect();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
