import type { Db } from '../../db/client.js';
import { SearchRepository, type SearchHit } from './search.repository.js';

export type { SearchHit };

/** What a search box takes: longer is no identifier Keyward hands out. */
export const SEARCH_MAX_CHARS = 200;
/** Hits listed at most; a longer list means the text was too short to tell. */
export const SEARCH_LIMIT = 20;

/** Finds the page of whatever identifier the operator has in hand. */
export class SearchService {
  private readonly repo: SearchRepository;

  constructor(db: Db) {
    this.repo = new SearchRepository(db);
  }

  /** Hits for `text` trimmed; none for an empty or over-long text (nothing is that long). */
  async find(text: string): Promise<SearchHit[]> {
    const wanted = text.trim();
    if (wanted === '' || wanted.length > SEARCH_MAX_CHARS) return [];
    return this.repo.find(wanted, SEARCH_LIMIT);
  }

  /**
   * The one enterprise a filter's text names: its global id, its code, or a name only one
   * enterprise begins with. Filters take what people know, not only ids.
   */
  async enterprise(text: string): Promise<{ globalId: string; name: string } | 'none' | SearchHit[]> {
    const hits = (await this.find(text)).filter((h) => h.kind === 'enterprise');
    const exact = hits.filter(
      (h) =>
        h.key === text.trim() ||
        h.detail === text.trim() ||
        h.label.toLowerCase() === text.trim().toLowerCase(),
    );
    const chosen = exact.length === 1 ? exact : hits;
    if (chosen.length === 0) return 'none';
    const only = chosen[0];
    if (chosen.length === 1 && only !== undefined) return { globalId: only.key, name: only.label };
    return chosen;
  }
}
