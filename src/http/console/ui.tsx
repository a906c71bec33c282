import type { ComponentChildren, InputHTMLAttributes } from 'preact';
import type { ConsoleContext } from './context.js';

/** A failure as a person reads it: the service's code, a sentence, and the field it is about. */
export interface ConsoleError {
  code?: string;
  message: string;
  /** The form field the failure is about: shown next to it as well. */
  field?: string;
}

/** The session's CSRF token: every form that changes something carries it. */
export function Csrf(props: { context: ConsoleContext }) {
  const { session } = props.context;
  return session === undefined ? null : <input type="hidden" name="_csrf" value={session.csrf} />;
}

/** The outcome of the last action, at the top of the page. */
export function Notice(props: {
  context: ConsoleContext;
  error?: ConsoleError | undefined;
  done?: string | undefined;
}) {
  const { error, done, context } = props;
  if (error !== undefined) {
    // The sentence is what the administrator reads; the code is for a support person, folded
    // under it (it names the failure in the API's reference and in the logs).
    return (
      <div class="notice error" role="alert">
        <p>{error.message}</p>
        {error.code !== undefined && (
          <details class="error-code" data-code={error.code}>
            <summary>{context.t('error.details')}</summary>
            <span class="code">{context.t('error.code', { code: error.code })}</span>
          </details>
        )}
      </div>
    );
  }
  if (done !== undefined) {
    return (
      <p class="notice done" role="status">
        {done}
      </p>
    );
  }
  return null;
}

/** A labelled input; the error about this field, if any, right under it. */
export function Field(props: {
  name: string;
  label: string;
  type?: 'text' | 'password' | 'search' | 'number' | 'date' | 'datetime-local' | 'email' | 'tel' | 'file';
  value?: string | number | undefined;
  required?: boolean;
  error?: ConsoleError | undefined;
  placeholder?: string;
  autocomplete?: string;
  maxLength?: number;
  /** For a datetime-local field: 1 lets it take seconds. */
  step?: number;
}) {
  const { name, label, error } = props;
  const invalid = error?.field === name;
  const id = `field-${name}`;
  return (
    <p class="field">
      <label for={id}>{label}</label>
      <input
        {...({
          id,
          name,
          type: props.type ?? 'text',
          value: props.value === undefined ? undefined : String(props.value),
          required: props.required,
          placeholder: props.placeholder,
          autocomplete: props.autocomplete,
          maxLength: props.maxLength,
          step: props.step,
          'aria-invalid': invalid ? 'true' : undefined,
          'aria-describedby': invalid ? `${id}-error` : undefined,
          // preact's types tie each input type to its allowed ARIA roles; no role is set here.
        } as InputHTMLAttributes)}
      />
      {/* Only the sentence: the notice at the top of the page keeps the code. */}
      {invalid && (
        <small id={`${id}-error`} class="field-error" data-code={error.code}>
          {error.message}
        </small>
      )}
    </p>
  );
}

/** A choice among `options` (value → label), marked as Field marks its input when `error` is about it. */
export function SelectField(props: {
  name: string;
  label: string;
  options: ReadonlyArray<readonly [string, string]>;
  selected: string;
  error?: ConsoleError | undefined;
}) {
  const { name, error } = props;
  const invalid = error?.field === name;
  const id = `field-${name}`;
  return (
    <p class="field">
      <label for={id}>{props.label}</label>
      <select
        id={id}
        name={name}
        aria-invalid={invalid ? 'true' : undefined}
        aria-describedby={invalid ? `${id}-error` : undefined}
      >
        {props.options.map(([value, label]) => (
          <option value={value} selected={value === props.selected}>
            {label}
          </option>
        ))}
      </select>
      {invalid && (
        <small id={`${id}-error`} class="field-error" data-code={error.code}>
          {error.message}
        </small>
      )}
    </p>
  );
}

/** A button that posts one action; destructive ones ask first (console.js). */
export function ActionButton(props: {
  context: ConsoleContext;
  action: string;
  label: string;
  confirm?: string;
  fields?: Record<string, string | number>;
  danger?: boolean;
}) {
  const { context, action, label, confirm, fields = {} } = props;
  return (
    <form method="post" action={action} class="inline" data-confirm={confirm}>
      <Csrf context={context} />
      {Object.entries(fields).map(([name, value]) => (
        <input type="hidden" name={name} value={String(value)} />
      ))}
      <button type="submit" class={props.danger ? 'danger' : 'secondary'}>
        {label}
      </button>
    </form>
  );
}

/** Says what to do when a list is empty. */
export function Empty(props: { children: ComponentChildren }) {
  return <p class="empty">{props.children}</p>;
}

/** Previous / next links around a page of a server-side list. */
export function Pager(props: {
  context: ConsoleContext;
  page: number;
  pageSize: number;
  total: number;
  href: (page: number) => string;
}) {
  const { context, page, pageSize, total, href } = props;
  const pages = Math.max(1, Math.ceil(total / pageSize));
  return (
    <nav class="pager" aria-label="pages">
      {page > 1 ? <a href={href(page - 1)}>{context.t('common.previous')}</a> : <span />}
      <span>{context.t('common.pageOf', { page, pages, total })}</span>
      {page < pages ? <a href={href(page + 1)}>{context.t('common.next')}</a> : <span />}
    </nav>
  );
}

/**
 * A time as the operator reads it: ISO, to the second, UTC. The date and the clock are apart, so
 * that a narrow column can break between them and not inside either (console.css).
 */
export function Time(props: { at: Date | number | null | undefined }) {
  if (props.at === null || props.at === undefined) return <span>—</span>;
  const date = new Date(props.at);
  const iso = date.toISOString();
  return (
    <time dateTime={iso}>
      <span>{iso.slice(0, 10)}</span> <span>{`${iso.slice(11, 19)} UTC`}</span>
    </time>
  );
}

/**
 * Names in a row (scopes, channels, event types): each name and the comma after it never break
 * apart, so a line neither splits a name (`auth_webhook s`) nor starts with a comma.
 */
export function InlineList(props: { items: readonly string[]; code?: boolean; max?: number }) {
  const { items, code = false, max } = props;
  // `max`: names of the sender's length (channel codes) are identifiers: each on one line,
  // shortened in the middle past `max` characters, the whole on hover.
  return (
    <span class="list-inline">
      {items.map((item, i) => (
        <>
          <span>
            {max !== undefined ? <Ident value={item} max={max} /> : code ? <code>{item}</code> : item}
            {i < items.length - 1 && ','}
          </span>
          {i < items.length - 1 && ' '}
        </>
      ))}
    </span>
  );
}

export type BadgeTone = 'ok' | 'warn' | 'bad' | 'neutral';

/** The console's status words by their tone: settled well, waiting, refused or broken. */
const TONES: Record<string, BadgeTone> = {
  active: 'ok',
  enabled: 'ok',
  completed: 'ok',
  delivered: 'ok',
  pending: 'warn',
  accepted: 'warn',
  disabled: 'bad',
  failed: 'bad',
};

/** The tone of a status word (apps, orders, endpoints, deliveries); neutral when unknown. */
export function toneOf(status: string): BadgeTone {
  return TONES[status] ?? 'neutral';
}

/** A status as a word in a coloured pill; the word stays on one line in every language. */
export function Badge(props: { tone: BadgeTone; children: ComponentChildren }) {
  return <span class={`badge ${props.tone}`}>{props.children}</span>;
}

/**
 * Every console table is a DataTable: each column has a kind, and the kind decides how its cells
 * read, so no page fixes a column by hand (issue 41 §2).
 *
 * - `id`: an identifier (asset number, lease id, app key, UUID). One line, monospace, shortened in
 *   the middle past `max` characters (the whole value stays in the text and in `title`: selecting
 *   the cell copies it whole), a copy button beside it (console.js), a link when `href` answers one.
 * - `code`: a name in code (an event type, a product id): one line, monospace, no copy button.
 * - `time`: compact, `2026-11-27 14:05`; the header says UTC once; the full instant on hover.
 * - `number`: right-aligned, figures of one width.
 * - `json`: a JSON value folded into a <details>, its summary naming what it holds.
 * - `text`: anything else, rendered by the page.
 */
export type ColumnKind = 'id' | 'code' | 'time' | 'number' | 'json' | 'text';

type Attributes = Record<string, string | number | boolean | undefined>;

interface ColumnBase<Row> {
  header: string;
  /** On the header, on hover: what the column means. */
  headerTitle?: string;
  /** The cells' class (page rules and tests find cells by it). */
  className?: string;
  /** Under the value, smaller, on a line of its own (an app's name under its key). */
  sub?: (row: Row) => ComponentChildren;
  /** What `sub` shows, under the header. */
  subHeader?: string;
  /** More attributes of the cell (`data-seats`). */
  cell?: (row: Row) => Attributes;
}

export interface IdColumn<Row> extends ColumnBase<Row> {
  kind: 'id' | 'code';
  value: (row: Row) => string | null | undefined;
  href?: (row: Row) => string | undefined;
  /** Characters shown at most, the ellipsis included; a longer value loses its middle. */
  max?: number;
}

export interface TimeColumn<Row> extends ColumnBase<Row> {
  kind: 'time';
  value: (row: Row) => Date | number | null | undefined;
}

export interface NumberColumn<Row> extends ColumnBase<Row> {
  kind: 'number';
  /** A number, or what stands for one ("—", "unlimited"). */
  value: (row: Row) => number | string | null | undefined;
}

export interface JsonColumn<Row> extends ColumnBase<Row> {
  kind: 'json';
  value: (row: Row) => unknown;
  /** The folded detail's summary; by default the names of the object's fields. */
  summary?: (row: Row) => ComponentChildren;
}

export interface TextColumn<Row> extends ColumnBase<Row> {
  kind: 'text';
  render: (row: Row) => ComponentChildren;
}

export type Column<Row> =
  IdColumn<Row> | TimeColumn<Row> | NumberColumn<Row> | JsonColumn<Row> | TextColumn<Row>;

/** An identifier's default length on screen: a UUID shows `0192a3b4-c…5e6f70`. */
const ID_MAX = 18;
/** Characters kept at the end of a shortened identifier (its start takes the rest). */
const ID_TAIL = 6;

/**
 * An identifier on one line. Past `max` characters its middle is hidden, not removed (console.css
 * collapses it and puts an ellipsis in its place): the text, a selection and a search still hold
 * the whole value.
 */
export function Ident(props: {
  /** The page's language, for the copy button's label: no button without it. */
  context?: ConsoleContext;
  value: string;
  href?: string | undefined;
  max?: number | undefined;
  /** false: no copy button (a code name rather than an identifier). */
  copy?: boolean;
}) {
  const { context, value, href, max = ID_MAX, copy = true } = props;
  const copyLabel = copy && context !== undefined ? context.t('common.copy') : undefined;
  const shortened = value.length > max;
  const head = Math.max(1, max - 1 - ID_TAIL);
  const text = shortened ? (
    <>
      {value.slice(0, head)}
      <span class="ident-cut">{value.slice(head, value.length - ID_TAIL)}</span>
      <span class="ident-tail">{value.slice(value.length - ID_TAIL)}</span>
    </>
  ) : (
    value
  );
  const code = (
    <code class={shortened ? 'ident shortened' : 'ident'} title={shortened ? value : undefined}>
      {text}
    </code>
  );
  // console.js adds the copy button where the line names its label: no dead button without
  // script, and none in the markup of a long table (the page budget).
  return (
    <span class="ident-line" data-copy-label={copyLabel}>
      {href === undefined ? code : <a href={href}>{code}</a>}
    </span>
  );
}

/** A time in a table: the date and the minute (the header says UTC); the full instant on hover. */
export function CompactTime(props: { at: Date | number | null | undefined }) {
  if (props.at === null || props.at === undefined) return <span>—</span>;
  const iso = new Date(props.at).toISOString();
  return (
    <time dateTime={iso} title={iso}>
      <span>{iso.slice(0, 10)}</span> <span>{iso.slice(11, 16)}</span>
    </time>
  );
}

/** A JSON value folded: the summary says what it holds, the whole value under it. */
export function JsonDetail(props: { value: unknown; summary?: ComponentChildren; max?: number }) {
  const { value } = props;
  const empty = typeof value === 'object' && value !== null && Object.keys(value).length === 0;
  if (value === null || value === undefined || empty) return <span>—</span>;
  const pretty = JSON.stringify(value, null, 2) ?? 'null';
  const max = props.max ?? Number.POSITIVE_INFINITY;
  const cut = pretty.length > max;
  return (
    <details class="json">
      <summary>{props.summary ?? <code>{jsonSummary(value)}</code>}</summary>
      <pre>{cut ? `${pretty.slice(0, max)}\n…` : pretty}</pre>
    </details>
  );
}

/** What a folded value holds, in a few characters: an object's field names, an array's length. */
function jsonSummary(value: unknown): string {
  if (Array.isArray(value)) return `[${value.length}]`;
  if (typeof value === 'object' && value !== null) {
    const keys = Object.keys(value);
    const names = keys.slice(0, 2).join(', ');
    return `{ ${names}${keys.length > 2 ? ', …' : ''} }`;
  }
  const text = JSON.stringify(value) ?? 'null';
  return text.length > 24 ? `${text.slice(0, 23)}…` : text;
}

function cellOf<Row>(context: ConsoleContext, column: Column<Row>, row: Row): ComponentChildren {
  switch (column.kind) {
    case 'id':
    case 'code': {
      const value = column.value(row);
      if (value === null || value === undefined || value === '') return '—';
      const max = column.max ?? (column.kind === 'id' ? ID_MAX : Number.POSITIVE_INFINITY);
      return (
        <Ident
          context={context}
          value={value}
          href={column.href?.(row)}
          max={max}
          copy={column.kind === 'id'}
        />
      );
    }
    case 'time':
      return <CompactTime at={column.value(row)} />;
    case 'number': {
      const value = column.value(row);
      return value === null || value === undefined ? '—' : String(value);
    }
    case 'json':
      return <JsonDetail value={column.value(row)} summary={column.summary?.(row)} />;
    case 'text':
      return column.render(row);
  }
}

/**
 * A table of `rows`, one column each of `columns` (a `false` column is left out: a column only
 * some pages show). In its scrolling frame unless `bare`.
 */
export function DataTable<Row>(props: {
  context: ConsoleContext;
  rows: readonly Row[];
  columns: ReadonlyArray<Column<Row> | false | undefined>;
  className?: string;
  /** Attributes of each row (`data-lease`), for tests and scripts to find it. */
  row?: (row: Row) => Attributes;
  bare?: boolean;
}) {
  const { context } = props;
  const columns = props.columns.filter((c): c is Column<Row> => c !== false && c !== undefined);
  const table = (
    <table class={props.className}>
      <thead>
        <tr>
          {columns.map((c) => (
            <th data-kind={c.kind} title={c.headerTitle}>
              {c.kind === 'time' ? context.t('common.inUtc', { header: c.header }) : c.header}
              {c.subHeader !== undefined && <small class="sub">{c.subHeader}</small>}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {props.rows.map((row) => (
          <tr {...(props.row?.(row) ?? {})}>
            {columns.map((c) => {
              const sub = c.sub?.(row);
              return (
                <td data-kind={c.kind} class={c.className} {...(c.cell?.(row) ?? {})}>
                  {cellOf(context, c, row)}
                  {sub !== undefined && sub !== null && sub !== false && <small class="sub">{sub}</small>}
                </td>
              );
            })}
          </tr>
        ))}
      </tbody>
    </table>
  );
  return props.bare === true ? table : <div class="table-wrap">{table}</div>;
}
