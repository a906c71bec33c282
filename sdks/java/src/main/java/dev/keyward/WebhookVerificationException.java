package dev.keyward;

/** A webhook that {@link WebhookVerifier} refused: answer 400 and do not act on it. */
public class WebhookVerificationException extends Exception {
    private static final long serialVersionUID = 1L;

    public WebhookVerificationException(String message) {
        super(message);
    }
}
