/** A CSV upload of employees: far more than member op 1's 100 rows a call, far less than a risk. */
export const UPLOAD_LIMIT_BYTES = 256 * 1024;

/**
 * Any other console post is a short form. The server's BODY_LIMIT_BYTES (10 MiB) is for batch
 * orders; a sign-in form, posted before any session, must not make the server read that much.
 */
export const FORM_LIMIT_BYTES = 16 * 1024;
