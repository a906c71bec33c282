/**
 * Swagger UI's request interceptor for /docs: a nonce is accepted once, so the one typed into the
 * "Try it out" form would work a single time; every call gets a fresh one instead. It runs in the
 * browser, serialized into the page as source, so it must stay self-contained.
 */
export const nonceInterceptor = (request: { url: string }) => {
  const base = (globalThis as { location?: { href?: string } }).location?.href;
  const url = new URL(request.url, base);
  if (url.searchParams.has('g_nonce')) {
    url.searchParams.set('g_nonce', crypto.randomUUID().replace(/-/g, ''));
    request.url = url.toString();
  }
  return request;
};
