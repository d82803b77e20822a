package io.rebalance.sim;

import java.util.ArrayList;
import java.util.List;

/** The first errors a simulator's threads met, kept for its report; later ones are dropped (one is enough to look). */
final class FirstErrors {
    private static final int KEPT = 20;
    private final List<String> errors = new ArrayList<>();

    synchronized void add(String what) {
        if (errors.size() < KEPT) errors.add(what);
    }

    synchronized List<String> list() {
        return List.copyOf(errors);
    }
}
