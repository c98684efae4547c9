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

  it("with a weight, holds at most its total, dropping the oldest, and keeps nothing heavier alone", () => {
    const map = new LruMap<string, string>(100, { of: (value) => value.length, max: 10 });
    map.set("a", "xxxx").set("b", "xxxx");
    map.get("a");
    map.set("c", "xxxx"); // 12 > 10: the least recently used (b) goes
    expect([...map.keys()]).toEqual(["a", "c"]);
    map.set("a", "x"); // overwriting frees what the old value weighed
    map.set("d", "xxxxx");
    expect([...map.keys()]).toEqual(["c", "a", "d"]);
    map.set("huge", "x".repeat(11));
    expect(map.has("huge")).toBe(false);
    expect([...map.keys()]).toEqual(["c", "a", "d"]);
    map.delete("c");
    map.set("e", "xxxx");
    expect([...map.keys()]).toEqual(["a", "d", "e"]);
  });
});
