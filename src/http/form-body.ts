/**
 * An urlencoded body as fields: a name given once is its text, a name given again is the list of
 * its texts, in order. Keeping one of them quietly (the last, as Object.fromEntries would) lets a
 * repeated field decide what a form meant, a second `_csrf` among them, and drops all but one of a
 * form's ticked checkboxes. A single-text field given as a list reads as missing (formText).
 */
export function formFields(text: string): Record<string, string | string[]> {
  const fields = new Map<string, string | string[]>();
  for (const [name, value] of new URLSearchParams(text)) {
    const seen = fields.get(name);
    if (seen === undefined) fields.set(name, value);
    // Pushed in place: a body of many repeats costs its length, not its square.
    else if (Array.isArray(seen)) seen.push(value);
    else fields.set(name, [seen, value]);
  }
  return Object.fromEntries(fields);
}
