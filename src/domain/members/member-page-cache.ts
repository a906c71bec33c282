/**
 * Member op 5's pages as last read, each kept with the enterprise's page version it was read at
 * (migration 0153, ADR 0014). A page is answered from here only while that version is still the
 * enterprise's current one, which every write to what the page shows moves in the writing
 * transaction, on whichever instance it ran; so a kept page is never staler than a fresh read.
 *
 * Bounded by the members held over all pages, least recently used out first: the bound is the
 * memory, whatever page sizes callers ask for. A tenant asking for many distinct pages only pushes
 * pages out; it cannot grow the cache.
 */
export class MemberPageCache<P> {
  private readonly entries = new Map<string, { version: string; page: P; weight: number }>();
  private weight = 0;

  constructor(private readonly maxWeight: number) {}

  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** The page kept for `key` if it was read at `version`, and it becomes the most recent. */
  get(key: string, version: string): P | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined || entry.version !== version) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.page;
  }

  /** Keeps a page read at `version`; `weight` is the members it holds (at least 1). */
  set(key: string, version: string, page: P, weight: number): void {
    const w = Math.max(1, weight);
    this.drop(key);
    if (w > this.maxWeight) return;
    this.entries.set(key, { version, page, weight: w });
    this.weight += w;
    for (const oldest of this.entries.keys()) {
      if (this.weight <= this.maxWeight) break;
      this.drop(oldest);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  private drop(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.weight -= entry.weight;
  }
}
