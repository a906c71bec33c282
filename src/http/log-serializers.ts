/**
 * Log lines carry what an operator needs to find a fault (its kind, message, database error code
 * and the request id beside it), never a stack trace, bound parameters or a secret.
 */
export function serializeError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { type: typeof error };
  const code = (error as { code?: unknown }).code;
  return {
    type: error.name,
    message: error.message,
    ...(typeof code === 'string' ? { code } : {}),
  };
}

/**
 * Query parameters that carry a credential when a caller wrongly puts one in the URL (a client
 * secret, the admin key, a token, a password). Compared without case, `_` optional.
 */
const SENSITIVE_PARAMETER =
  /^(client_?secret|app_?secret|secret|password|passwd|pwd|access_?token|refresh_?token|id_?token|token|client_?token|user_?token|key|admin_?key|api_?key|authorization|auth)$/i;

function parameterName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}

/** The URL with the value of every sensitive query parameter replaced by `[redacted]`. */
export function redactUrl(url: string): string {
  const start = url.indexOf('?');
  if (start < 0) return url;
  const query = url
    .slice(start + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = equals < 0 ? pair : pair.slice(0, equals);
      return SENSITIVE_PARAMETER.test(parameterName(name)) ? `${name}=[redacted]` : pair;
    });
  return `${url.slice(0, start)}?${query.join('&')}`;
}

interface LoggedRequest {
  method: string;
  url: string;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
}

/** Fastify's request serializer, with credentials in the query redacted. */
export function serializeRequest(request: LoggedRequest): Record<string, unknown> {
  return {
    method: request.method,
    url: redactUrl(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}
