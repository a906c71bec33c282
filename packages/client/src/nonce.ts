/** A fresh `g_nonce`: 32 hex digits from the platform's CSPRNG (Node 20+ and browsers alike). */
export function freshNonce(): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
}
