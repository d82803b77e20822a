package io.rebalance.cutover;

import java.util.Map;

/**
 * What a finished command did.
 *
 * @param blockedMs how long writes were blocked: from the exclusive request to the release
 * @param stepMs how long each step took, in the order they ran
 */
public record CutoverOutcome(String op, long token, long blockedMs, Map<CutoverStep, Long> stepMs, String detail) {}
