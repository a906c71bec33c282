import type { ComponentChildren } from 'preact';
import { UsageInputError } from '../../../domain/usage/usage-range.js';
import type { ConsoleContext } from '../context.js';
import type { Translate } from '../i18n/index.js';
import { Field, SelectField, type ConsoleError } from '../ui.js';
import type { DateField, UsageForm } from './usage-filter.js';

/**
 * A filter the page cannot show, as a sentence in the page's language next to the field it names:
 * a date field that is not a day, or what the service refused (a reversed or too long range, an
 * unknown enterprise).
 */
export function usageErrorOf(t: Translate, problem: DateField | UsageInputError): ConsoleError {
  if (!(problem instanceof UsageInputError)) return { field: problem, message: t('usage.badDate') };
  switch (problem.problem) {
    case 'reversed':
      return { field: problem.field, message: t('usage.reversed') };
    case 'too-long':
      return { field: problem.field, message: t('usage.tooLong', { max: problem.limit }) };
    case 'out-of-range':
      return { field: problem.field, message: t('usage.outOfRange') };
    case 'unknown':
    case 'invalid':
      return { field: problem.field, message: t('usage.badFilter', { message: problem.message }) };
  }
}

/**
 * Both Usage pages' filter: the product, the page's own fields (`children`: the operator's
 * enterprise), per hour or day, and the range's two UTC days (blank: the default range). A field
 * the page could not apply shows its sentence under it.
 */
export function UsageFilterForm(props: {
  context: ConsoleContext;
  action: string;
  form: UsageForm;
  error: ConsoleError | undefined;
  /** The enterprise's products to choose from; absent, the product is typed (the operator's). */
  products?: readonly string[];
  children?: ComponentChildren;
}) {
  const { t } = props.context;
  const { form, error } = props;
  return (
    <form method="get" action={props.action} class="filters">
      {props.products === undefined ? (
        <Field name="product" label={t('usage.product')} value={form.product} maxLength={255} error={error} />
      ) : (
        <SelectField
          name="product"
          label={t('usage.product')}
          selected={form.product}
          options={[['', t('usage.ent.allProducts')], ...props.products.map((p) => [p, p] as const)]}
        />
      )}
      {props.children}
      <SelectField
        name="bucket"
        label={t('usage.bucket')}
        selected={form.bucket}
        options={[
          ['day', t('usage.bucket.day')],
          ['hour', t('usage.bucket.hour')],
        ]}
      />
      <Field name="from" type="date" label={t('usage.from')} value={form.from} error={error} />
      <Field name="to" type="date" label={t('usage.to')} value={form.to} error={error} />
      <p>
        <button type="submit">{t('usage.show')}</button>
      </p>
    </form>
  );
}
