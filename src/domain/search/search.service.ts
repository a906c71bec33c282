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
}
