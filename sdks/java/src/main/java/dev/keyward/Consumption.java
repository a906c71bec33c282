package dev.keyward;

/**
 * What {@code consume} answered.
 *
 * @param consumed the product's total consumption, this call's amount included
 * @param limit the license's amount, or null when it sets none
 * @param remaining what is left, or null when there is no limit
 */
public record Consumption(long consumed, Long limit, Long remaining) {}
