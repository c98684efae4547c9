/**
 * A Map that holds at most `maxEntries`: reading or writing a key makes it the newest, and
 * a write past the bound drops the oldest. For caches keyed by what users choose (model
 * ids), where an unbounded Map is a memory leak anyone can drive.
 */
export class LruMap<K, V> extends Map<K, V> {
  constructor(readonly maxEntries: number) {
    super();
  }

  override get(key: K): V | undefined {
    if (!super.has(key)) return undefined;
    const value = super.get(key) as V;
    super.delete(key);
    super.set(key, value);
    return value;
  }

  override set(key: K, value: V): this {
    super.delete(key);
    super.set(key, value);
    for (const oldest of this.keys()) {
      if (this.size <= this.maxEntries) break;
      super.delete(oldest);
    }
    return this;
  }
}
