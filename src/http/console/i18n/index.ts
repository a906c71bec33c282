import type { FastifyRequest } from 'fastify';
import { activationEn, activationZh } from './activation.js';
import { commonEn, commonZh } from './common.js';
import { drilldownEn, drilldownZh } from './drilldown.js';
import { enterpriseEn, enterpriseZh } from './enterprise.js';
import { operatorEn, operatorZh } from './operator.js';
import { operatorsEn, operatorsZh } from './operators.js';
import { relayEn, relayZh } from './relay.js';
import { relaysEn, relaysZh } from './relays.js';
import { renewalsEn, renewalsZh } from './renewals.js';
import { runtimeEn, runtimeZh } from './runtime.js';
import { ssoEn, ssoZh } from './sso.js';
import { usageEn, usageZh } from './usage.js';

export const LOCALES = ['en', 'zh-CN'] as const;
export type Locale = (typeof LOCALES)[number];

const en = {
  ...commonEn,
  ...operatorEn,
  ...enterpriseEn,
  ...activationEn,
  ...ssoEn,
  ...operatorsEn,
  ...usageEn,
  ...runtimeEn,
  ...renewalsEn,
  ...drilldownEn,
  ...relayEn,
  ...relaysEn,
};
export type MessageKey = keyof typeof en;
const zh: Record<MessageKey, string> = {
  ...commonZh,
  ...operatorZh,
  ...enterpriseZh,
  ...activationZh,
  ...ssoZh,
  ...operatorsZh,
  ...usageZh,
  ...runtimeZh,
  ...renewalsZh,
  ...drilldownZh,
  ...relayZh,
  ...relaysZh,
};
const catalogs: Record<Locale, Record<MessageKey, string>> = { en, 'zh-CN': zh };

/** The cookie that keeps a chosen language (not a secret; no session needed). */
export const LANG_COOKIE = 'keyward_lang';

export type Translate = (key: MessageKey, params?: Record<string, string | number>) => string;

export function translator(locale: Locale): Translate {
  const catalog = catalogs[locale];
  return (key, params) => {
    const text = catalog[key];
    if (params === undefined) return text;
    return text.replace(/\{(\w+)\}/g, (whole, name: string) =>
      name in params ? String(params[name]) : whole,
    );
  };
}

export function isLocale(value: unknown): value is Locale {
  return typeof value === 'string' && (LOCALES as readonly string[]).includes(value);
}

/** The chosen language (cookie), else the browser's first acceptable one, else English. */
export function localeOf(request: FastifyRequest): Locale {
  const chosen = request.cookies[LANG_COOKIE];
  if (isLocale(chosen)) return chosen;
  const accepted = (request.headers['accept-language'] ?? '')
    .split(',')
    .map((part) => {
      const [tag = '', ...rest] = part.trim().split(';');
      const q = rest.find((r) => r.trim().startsWith('q='));
      return { tag: tag.toLowerCase(), q: q === undefined ? 1 : Number(q.trim().slice(2)) || 0 };
    })
    .filter((entry) => entry.q > 0)
    .sort((a, b) => b.q - a.q);
  for (const { tag } of accepted) {
    if (tag === 'zh' || tag.startsWith('zh-')) return 'zh-CN';
    if (tag === 'en' || tag.startsWith('en-')) return 'en';
  }
  return 'en';
}
