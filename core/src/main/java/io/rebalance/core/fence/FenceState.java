package io.rebalance.core.fence;

/** A store's fence for one scope: who may write, and the smallest token it accepts from applications. */
public record FenceState(FenceWriter writer, long minToken) {
    public boolean admitsApp(long token) {
        return writer == FenceWriter.APP && token >= minToken;
    }

    @Override
    public String toString() {
        return "writer=" + writer.wire() + ", min_token=" + minToken;
    }
}
