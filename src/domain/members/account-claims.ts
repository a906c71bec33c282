/**
 * The accounts that member op 1 calls of this process are adding right now. A call first waits
 * until none of its accounts is being added by another call, then holds them until its
 * transaction ends. Of several identical calls at once, only the first hashes passwords; the
 * others find the accounts taken and hash nothing. Across instances the insert still refuses a
 * second copy of an account; only the hashing is not spared there.
 */
export class AccountClaims {
  private readonly held = new Map<string, Promise<void>>();

  /** Waits for `keys` to be free, takes them, and returns the function that frees them. */
  async claim(keys: readonly string[]): Promise<() => void> {
    for (;;) {
      const busy = keys.flatMap((key) => this.held.get(key) ?? []);
      if (busy.length === 0) break;
      await Promise.all(busy);
    }
    // Checked and taken in one turn of the event loop: no other call can come in between.
    let free!: () => void;
    const done = new Promise<void>((resolve) => (free = resolve));
    for (const key of keys) this.held.set(key, done);
    return () => {
      for (const key of keys) if (this.held.get(key) === done) this.held.delete(key);
      free();
    };
  }
}
