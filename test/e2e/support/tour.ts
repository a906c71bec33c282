/**
 * Reading the tour (docs/tour.md): its ```sh blocks, each a command followed by the answer it gives
 * as `#` comment lines. An answer may leave things out with a bare `…` (an array element or object
 * member); it is then a pattern the real answer must fit.
 */

/** How every command names the server: $KEYWARD_URL, as the start banner and the demo export it. */
export const TOUR_SERVER = '$KEYWARD_URL';
/** How the webhooks section names its local receiver: $RECEIVER, else the default address. */
export const TOUR_RECEIVER = '${RECEIVER:-http://127.0.0.1:8090/keyward}';
/** The tour's section after the operations of the interface documents. */
export const WEBHOOKS_SECTION = 'Webhooks';
/** The sections that build and run a licensed program: their answers are text, not JSON. */
export const PROGRAM_SECTIONS = [
  'Licensing a C program',
  'A machine with no network',
  'A relay for a closed network',
];

/**
 * Whether a program's text output fits the documented lines: each documented line, its `…` any
 * text, matches an output line, in order; a line that is only `…` stands for any lines.
 */
export function textFits(documented: string, output: string): boolean {
  const lines = output.split('\n');
  let at = 0;
  let skipping = false;
  for (const want of documented.split('\n')) {
    if (want.trim() === '…') {
      skipping = true;
      continue;
    }
    const pattern = new RegExp(
      `^${want
        .split('…')
        .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*')}$`,
    );
    const found = lines.findIndex((line, i) => i >= at && pattern.test(line));
    if (found < 0 || (!skipping && found !== at)) return false;
    at = found + 1;
    skipping = false;
  }
  return true;
}

export interface TourStep {
  /** The heading and bold label before the block: "Order service: Op 1, bind a customer …" */
  label: string;
  /** The text between the previous block and this one: what the reader is told about the step. */
  prose: string;
  command: string;
  documented: string;
}

/**
 * The ```sh blocks under the tour's `## ` headings, in order. What comes before the first heading
 * tells how to set up, and is not a step.
 */
export function tourSteps(tour: string): TourStep[] {
  const start = tour.indexOf('\n## ');
  if (start < 0) throw new Error('the tour has no "## " section');
  const steps = tour.slice(start + 1);
  const found: TourStep[] = [];
  const fence = /```sh\n([\s\S]*?)```/g;
  let previousEnd = 0;
  for (let match = fence.exec(steps); match !== null; match = fence.exec(steps)) {
    const lines = (match[1] ?? '').trimEnd().split('\n');
    let split = lines.length;
    while (split > 0 && lines[split - 1]?.startsWith('#')) split -= 1;
    const before = steps.slice(0, match.index);
    const heading = [...before.matchAll(/^## (.+)$/gm)].at(-1)?.[1];
    const label = [...before.matchAll(/\*\*([^*]+)\*\*/g)].at(-1)?.[1] ?? `step ${found.length + 1}`;
    const prose = steps.slice(previousEnd, match.index).trim();
    previousEnd = match.index + match[0].length;
    found.push({
      label: heading === undefined ? label : `${heading}: ${label}`,
      prose,
      command: lines.slice(0, split).join('\n'),
      documented: lines
        .slice(split)
        .map((line) => line.replace(/^# ?/, ''))
        .join('\n'),
    });
  }
  return found;
}

/** The method and path a tour command calls, its `$VARIABLES` turned into `{}`. */
export function operationOf(command: string): string {
  const method = /-X ([A-Z]+)/.exec(command)?.[1] ?? 'GET';
  const at = command.indexOf(`"${TOUR_SERVER}/`);
  if (at < 0) throw new Error(`no request to "${TOUR_SERVER}/…" in:\n${command}`);
  const url = /^[^"?]*/.exec(command.slice(at + TOUR_SERVER.length + 1))?.[0] ?? '';
  return `${method} ${url.replace(/\$[A-Z_]+/g, '{}')}`;
}

/** Parses a documented answer, dropping each bare `…` and the comma that went with it. */
export function parseDocumented(text: string): unknown {
  let out = '';
  let inString = false;
  let dropNextComma = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i] as string;
    if (inString) {
      out += c;
      if (c === '\\') out += text[(i += 1)] ?? '';
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '…') {
      out = out.trimEnd();
      if (out.endsWith(',')) out = out.slice(0, -1);
      else dropNextComma = true;
      continue;
    }
    if (dropNextComma && c === ',') {
      dropNextComma = false;
      continue;
    }
    if (c.trim() !== '') dropNextComma = false;
    if (c === '"') inString = true;
    out += c;
  }
  return JSON.parse(out);
}

/**
 * What a second run of a step answers differently from the first, beyond ids, numbers and times
 * (which differ on every run): a flag that turned, a value that became null or stopped being null.
 * Lists are compared item by item, as far as both go.
 */
export function stateChanges(first: unknown, second: unknown, path = ''): string[] {
  if (first === null || second === null) {
    return (first === null) === (second === null)
      ? []
      : [`${path}: ${JSON.stringify(first)} then ${JSON.stringify(second)}`];
  }
  if (typeof first === 'boolean' && typeof second === 'boolean') {
    return first === second ? [] : [`${path}: ${String(first)} then ${String(second)}`];
  }
  if (Array.isArray(first) && Array.isArray(second)) {
    return first.slice(0, second.length).flatMap((item, i) => stateChanges(item, second[i], `${path}[${i}]`));
  }
  if (typeof first === 'object' && typeof second === 'object' && !Array.isArray(first)) {
    const b = second as Record<string, unknown>;
    return Object.entries(first as Record<string, unknown>)
      .filter(([key]) => key in b)
      .flatMap(([key, value]) => stateChanges(value, b[key], path === '' ? key : `${path}.${key}`));
  }
  return [];
}

const kind = (value: unknown): string =>
  Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value;

/**
 * How `actual` fails to fit the documented answer: the same `code` and `message`, `data` present
 * exactly when documented, and below that every documented field present with the documented
 * type. Values are not compared: ids, numbers and times differ from run to run.
 */
export function differences(documented: unknown, actual: unknown): string[] {
  const doc = documented as Record<string, unknown>;
  const got = actual as Record<string, unknown>;
  const found: string[] = [];
  for (const key of ['code', 'message']) {
    if (got[key] !== doc[key])
      found.push(`${key}: documented ${JSON.stringify(doc[key])}, got ${JSON.stringify(got[key])}`);
  }
  if ('data' in doc !== 'data' in got) found.push(`data: documented ${'data' in doc ? '' : 'no '}data`);
  else if ('data' in doc) fit(doc.data, got.data, 'data', found);
  return found;
}

function fit(doc: unknown, got: unknown, path: string, found: string[]): void {
  if (doc === null) return;
  if (got === null) {
    // A documented text, number or flag may be empty at run time (an unassigned holder, a time);
    // a documented object or list may not.
    if (typeof doc === 'object') found.push(`${path}: documented ${kind(doc)}, got null`);
    return;
  }
  if (kind(doc) !== kind(got)) {
    found.push(`${path}: documented ${kind(doc)}, got ${kind(got)}`);
    return;
  }
  if (Array.isArray(doc)) {
    const items = got as unknown[];
    if (items.length < doc.length) found.push(`${path}: documented ${doc.length} items, got ${items.length}`);
    doc.forEach((item, i) => fit(item, items[i], `${path}[${i}]`, found));
    return;
  }
  if (typeof doc === 'object') {
    const object = got as Record<string, unknown>;
    for (const [key, value] of Object.entries(doc as Record<string, unknown>)) {
      if (!(key in object)) found.push(`${path}.${key}: documented, not in the answer`);
      else fit(value, object[key], `${path}.${key}`, found);
    }
  }
}

/** The command lines of every ```sh block, without the answers shown as `#` lines or ` # …` notes. */
export function commandLines(markdown: string): string[] {
  return [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)]
    .flatMap((match) => (match[1] ?? '').split('\n'))
    .filter((line) => !line.trimStart().startsWith('#'))
    .map((line) => line.replace(/\s+# .*$/, ''));
}

/**
 * The ```sh blocks of a Markdown section: from its heading to the next `##` or deeper one (a `# `
 * line is a shell comment inside a block).
 */
export function sectionBlocks(markdown: string, heading: string): string[] {
  const start = markdown.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`no section "${heading}"`);
  const rest = markdown.slice(start + heading.length + 2);
  const next = rest.search(/^#{2,6} /m);
  const section = next < 0 ? rest : rest.slice(0, next);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => (match[1] ?? '').trimEnd());
}
