/**
 * What a terminal would obey rather than show: C0 (ESC, CR, LF, TAB…), DEL and C1, plus the
 * characters that break or reorder a line without being control characters (line and paragraph
 * separators, bidirectional overrides). The server refuses them in new text, but the database may
 * hold older rows, and a name must never forge a line of `keyward audit` or move the cursor.
 */
// eslint-disable-next-line no-control-regex -- finding them is the point
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** `text` with every unprintable character shown as an escape: ESC as `\x1b`, U+202E as `\u{202e}`. */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
  });
}

/**
 * A tagged template for the CLI's text output: the template's own tabs and newlines lay out the
 * line, every value put into it is shown with `printable`.
 */
export function text(strings: TemplateStringsArray, ...values: unknown[]): string {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += printable(String(value)) + (strings[i + 1] ?? '');
  });
  return out;
}

/** Unprintable characters JSON.stringify leaves as they are (it escapes only C0). */
const RAW_IN_JSON = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** `--json` output: JSON.stringify, with the characters it leaves raw written as `\u` escapes. */
export function printableJson(value: unknown): string {
  return JSON.stringify(value).replace(
    RAW_IN_JSON,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
