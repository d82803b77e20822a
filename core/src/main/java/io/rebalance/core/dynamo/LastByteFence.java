package io.rebalance.core.dynamo;

import io.rebalance.protocol.lease.LeaseLost;
import io.rebalance.protocol.lease.WriteFence;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A fenced request's body that holds its last byte back until the fence is asked once more: the server acts on no
 * request before its last byte, so a writer paused after {@link FencedWrites#beforeTransmission} (a stop of the whole
 * process, a stall while the connection is taken from the pool or the body is written) wakes to a refusal, and the
 * request, cut short, is abandoned with its connection. What is left between the check and the bytes leaving is the
 * HTTP client's flush of one buffer; a pause there is caught after the call ({@link LandedPastLease}, ADR 6).
 */
final class LastByteFence extends FilterInputStream {
    private final WriteFence fence;
    private final AtomicBoolean transmitting;
    private final AtomicBoolean released;
    private long left;

    /**
     * @param length the body's exact length in bytes
     * @param transmitting true while an attempt is being sent (the signer's read of the body releases nothing)
     * @param released set when the last byte passes its check while transmitting
     */
    LastByteFence(InputStream body, long length, WriteFence fence, AtomicBoolean transmitting, AtomicBoolean released) {
        super(body);
        this.left = length;
        this.fence = fence;
        this.transmitting = transmitting;
        this.released = released;
    }

    @Override
    public int read() throws IOException {
        if (left == 1) check();
        int b = super.read();
        if (b >= 0) left--;
        return b;
    }

    @Override
    public int read(byte[] buffer, int offset, int length) throws IOException {
        if (length == 0) return 0;
        if (left == 1) check();
        int n = super.read(buffer, offset, left > 1 ? (int) Math.min(length, left - 1) : length);
        if (n > 0) left -= n;
        return n;
    }

    @Override
    public long skip(long n) throws IOException {
        if (n <= 0) return 0;
        return read() < 0 ? 0 : 1; // never skips past the held byte unchecked
    }

    @Override
    public boolean markSupported() {
        return false; // a retry reads a new stream from the body's provider
    }

    private void check() {
        if (fence.beforeWrite().compareTo(FencedWrites.ABORT_MARGIN) <= 0) {
            throw new LeaseLost("", "the lease ended while the write was being sent; its last byte is not sent");
        }
        if (transmitting.get()) released.set(true);
    }
}
