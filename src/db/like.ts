/** `%`, `_` and `\` in a searched text are the characters themselves, not LIKE wildcards. */
export function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** A LIKE pattern matching `text` anywhere. */
export function likeSubstring(text: string): string {
  return `%${likeLiteral(text)}%`;
}
