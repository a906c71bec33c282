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
export function InlineList(props: { items: readonly string[]; code?: boolean; long?: boolean }) {
  const { items, code = false, long = false } = props;
  // `long`: names of the sender's length (channel codes) may break inside, rather than widen.
  return (
    <span class={long ? 'list-inline long' : 'list-inline'}>
      {items.map((item, i) => (
        <>
          <span>
            {code ? <code>{item}</code> : item}
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
