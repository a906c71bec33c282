import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { MemberPageCache } from '../../src/domain/members/member-page-cache.js';

describe('MemberPageCache', () => {
  it('answers a page only at the version it was read at', () => {
    const cache = new MemberPageCache<string>(100);
    cache.set('p1', '7', 'page at 7', 10);
    expect(cache.get('p1', '7')).toBe('page at 7');
    expect(cache.get('p1', '8')).toBeUndefined();
    expect(cache.get('p2', '7')).toBeUndefined();
    cache.set('p1', '8', 'page at 8', 10);
    expect(cache.get('p1', '7')).toBeUndefined();
    expect(cache.get('p1', '8')).toBe('page at 8');
  });

  it('holds at most its weight in members, the least recently used out first', () => {
    const cache = new MemberPageCache<string>(30);
    cache.set('a', '1', 'A', 10);
    cache.set('b', '1', 'B', 10);
    cache.set('c', '1', 'C', 10);
    expect(cache.get('a', '1')).toBe('A'); // a is now the most recent; b the least
    cache.set('d', '1', 'D', 10);
    expect(cache.has('b')).toBe(false);
    expect([cache.has('a'), cache.has('c'), cache.has('d')]).toEqual([true, true, true]);
    cache.set('big', '1', 'BIG', 25);
    expect(cache.size).toBe(1);
    expect(cache.get('big', '1')).toBe('BIG');
  });

  it('keeps no page heavier than the whole bound, and an empty page weighs one', () => {
    const cache = new MemberPageCache<string>(5);
    cache.set('huge', '1', 'H', 6);
    expect(cache.has('huge')).toBe(false);
    for (let i = 0; i < 20; i += 1) cache.set(`empty-${i}`, '1', '', 0);
    expect(cache.size).toBe(5);
  });

  it('keeps nothing with a bound of 0', () => {
    const cache = new MemberPageCache<string>(0);
    cache.set('a', '1', 'A', 1);
    cache.set('empty', '1', '', 0);
    expect([cache.size, cache.has('a'), cache.get('a', '1')]).toEqual([0, false, undefined]);
  });

  it('replacing a page frees its old weight', () => {
    const cache = new MemberPageCache<string>(20);
    cache.set('a', '1', 'A', 15);
    cache.set('a', '2', 'A2', 15);
    cache.set('b', '1', 'B', 5);
    expect([cache.get('a', '2'), cache.get('b', '1')]).toEqual(['A2', 'B']);
  });
});

describe('MEMBER_PAGE_CACHE_MEMBERS', () => {
  it('defaults to 10,000, takes 0 to keep none, and refuses anything but a whole number', () => {
    expect(loadConfig({}).limits.keptPageMembers).toBe(10_000);
    expect(loadConfig({ MEMBER_PAGE_CACHE_MEMBERS: '0' }).limits.keptPageMembers).toBe(0);
    for (const bad of ['-1', '1e4', 'lots']) {
      expect(() => loadConfig({ MEMBER_PAGE_CACHE_MEMBERS: bad })).toThrow(/MEMBER_PAGE_CACHE_MEMBERS/);
    }
  });
});
