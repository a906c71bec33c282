import type { SearchHit } from '../../../domain/search/search.service.js';
import { SEARCH_MAX_CHARS } from '../../../domain/search/search.service.js';
import type { App } from '../../app-type.js';
import { operatorMay } from '../../access/access.js';
import { operatorContext, type ConsoleContext } from '../context.js';
import { queryText } from '../form-fields.js';
import type { MessageKey } from '../i18n/index.js';
import { Layout } from '../layout.js';
import { redirectTo, sendPage } from '../render.js';
import { Empty } from '../ui.js';
import { operatorLinks } from './links.js';

/** The page each kind of hit opens. */
export function hitHref(hit: SearchHit): string {
  switch (hit.kind) {
    case 'asset':
      return operatorLinks.asset(hit.key);
    case 'lease':
      return operatorLinks.lease(hit.key);
    case 'order':
      return operatorLinks.order(hit.key);
    case 'app':
      return operatorLinks.app(hit.key);
    case 'member':
      return operatorLinks.member(hit.key);
    case 'enterprise':
      return operatorLinks.enterprise(hit.key);
  }
}

const KIND_NAMES: Record<SearchHit['kind'], MessageKey> = {
  asset: 'search.kind.asset',
  lease: 'search.kind.lease',
  order: 'search.kind.order',
  app: 'search.kind.app',
  member: 'search.kind.member',
  enterprise: 'search.kind.enterprise',
};

function Hits(props: { context: ConsoleContext; hits: readonly SearchHit[] }) {
  const { t } = props.context;
  return (
    <ul class="search-hits">
      {props.hits.map((hit) => (
        <li data-hit={hit.kind}>
          <span class="badge neutral">{t(KIND_NAMES[hit.kind])}</span> <a href={hitHref(hit)}>{hit.label}</a>
          {hit.detail !== null && hit.detail !== hit.label && <small class="hint"> · {hit.detail}</small>}
        </li>
      ))}
    </ul>
  );
}

/**
 * GET /console/operator/search?q=…: the side bar's search. One hit opens its page at once; several
 * are listed (an enterprise name's beginning shared by many); none says what can be searched.
 */
export function searchRoute(app: App): void {
  app.get<{ Querystring: { q?: string } }>(
    '/operator/search',
    { config: { access: operatorMay('read') } },
    async (request, reply) => {
      const context = operatorContext(request);
      const { t } = context;
      const text = queryText(request.query.q, SEARCH_MAX_CHARS + 1).trim();
      const hits = await app.services.search.find(text);
      const only = hits[0];
      if (hits.length === 1 && only !== undefined) return redirectTo(reply, hitHref(only));
      return sendPage(
        reply,
        <Layout context={context} title={t('search.title')}>
          <form method="get" action="/console/operator/search" class="filters" role="search">
            <label>
              {t('search.label')}{' '}
              <input type="search" name="q" value={text} maxLength={SEARCH_MAX_CHARS} required />
            </label>
            <button type="submit">{t('search.go')}</button>
          </form>
          {text === '' ? (
            <p class="hint">{t('search.what')}</p>
          ) : hits.length === 0 ? (
            <>
              <Empty>{t('search.none', { text })}</Empty>
              <p class="hint">{t('search.what')}</p>
            </>
          ) : (
            <>
              <p>{t('search.many', { count: hits.length, text })}</p>
              <Hits context={context} hits={hits} />
            </>
          )}
        </Layout>,
      );
    },
  );
}
