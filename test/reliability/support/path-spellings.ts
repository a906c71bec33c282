/**
 * Other spellings of one path, as an attacker writes them to slip past a check that reads the URL's
 * text: each segment with a percent-encoded letter, an encoded or doubled slash, a trailing slash,
 * another case, a matrix parameter, a dot segment and an encoded climb back up.
 */
export function spellingsOf(path: string): string[] {
  const segments = path.split('/').slice(1);
  const join = (parts: string[]) => `/${parts.join('/')}`;
  const encodeLetter = (segment: string, at: 'first' | 'last'): string | undefined => {
    const indexes = [...segment].map((c, i) => (/[A-Za-z]/.test(c) ? i : -1)).filter((i) => i >= 0);
    const i = at === 'first' ? indexes[0] : indexes.at(-1);
    if (i === undefined) return undefined;
    const hex = segment.charCodeAt(i).toString(16).toUpperCase();
    return `${segment.slice(0, i)}%${hex}${segment.slice(i + 1)}`;
  };
  const out = new Set<string>([path]);
  segments.forEach((segment, s) => {
    for (const at of ['first', 'last'] as const) {
      const encoded = encodeLetter(segment, at);
      if (encoded !== undefined) out.add(join(segments.map((part, i) => (i === s ? encoded : part))));
    }
    if (s > 0) {
      // The slash before this segment encoded, doubled; a matrix parameter on the segment before.
      const before = segments.slice(0, s);
      const after = segments.slice(s);
      out.add(`${join(before)}%2F${after.join('/')}`);
      out.add(`${join(before)}//${after.join('/')}`);
      out.add(`${join(before)};x=1/${after.join('/')}`);
      out.add(`${join(before)}/./${after.join('/')}`);
      out.add(`${join(before)}/x/..%2F${after.join('/')}`);
    }
  });
  // Every letter encoded at once.
  out.add(path.replace(/[A-Za-z]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`));
  out.add(`//${path.slice(1)}`);
  out.add(`${path}/`);
  out.add(`${path};x=1`);
  out.add(path.toUpperCase());
  out.add(path.replace(/(^|\/)([a-z])/g, (_m, slash: string, c: string) => `${slash}${c.toUpperCase()}`));
  return [...out];
}
