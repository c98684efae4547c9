import { describe, expect, it } from "vitest";
import { LruMap } from "@/lib/lru-map";

describe("LruMap", () => {
  it("never holds more than its bound, dropping the least recently used", () => {
    const map = new LruMap<string, number>(3);
    for (const [i, key] of ["a", "b", "c"].entries()) map.set(key, i);
    map.get("a"); // a is now the newest
    map.set("d", 3);
    expect([...map.keys()]).toEqual(["c", "a", "d"]);
    for (let i = 0; i < 10_000; i++) map.set(`user-chosen-${i}`, i);
    expect(map.size).toBe(3);
  });

  it("treats overwriting a key as using it, without growing", () => {
    const map = new LruMap<string, number>(2);
    map.set("a", 1).set("b", 2).set("a", 3).set("c", 4);
    expect(Object.fromEntries(map)).toEqual({ a: 3, c: 4 });
    expect(map.get("missing")).toBeUndefined();
  });
});
