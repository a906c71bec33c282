package dev.keyward;

import java.time.Instant;

/**
 * What a check-in answered.
 *
 * @param usedSeconds the lease's accumulated use, charged to the license
 * @param seatFreeAt when the seat is free for another machine: now for an online lease, the
 *     offline lease's expiry otherwise (unless the application allows early return)
 */
public record CheckIn(long usedSeconds, Instant seatFreeAt) {}
