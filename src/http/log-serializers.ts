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
