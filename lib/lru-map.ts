/**
 * A Map that holds at most `maxEntries`: reading or writing a key makes it the newest, and
 * a write past the bound drops the oldest. For caches keyed by what users choose (model
 * ids), where an unbounded Map is a memory leak anyone can drive. With `weight`, it also
 * holds at most `weight.max` in all (for values whose size varies, such as message texts).
 */
export class LruMap<K, V> extends Map<K, V> {
  private weightHeld = 0;

  constructor(
    readonly maxEntries: number,
    private readonly weight?: { of: (value: V) => number; max: number },
  ) {
    super();
  }

  override get(key: K): V | undefined {
    if (!super.has(key)) return undefined;
    const value = super.get(key) as V;
    super.delete(key);
    super.set(key, value);
    return value;
  }

  /** A value heavier than `weight.max` alone is not kept. */
  override set(key: K, value: V): this {
    this.delete(key);
    const weight = this.weight?.of(value) ?? 0;
    if (this.weight && weight > this.weight.max) return this;
    super.set(key, value);
    this.weightHeld += weight;
    for (const oldest of this.keys()) {
      if (this.size <= this.maxEntries && this.weightHeld <= (this.weight?.max ?? 0)) break;
      this.delete(oldest);
    }
    return this;
  }

  override delete(key: K): boolean {
    if (this.weight && super.has(key)) this.weightHeld -= this.weight.of(super.get(key) as V);
    return super.delete(key);
  }

  override clear(): void {
    this.weightHeld = 0;
    super.clear();
  }
}
