package io.rebalance.protocol.fence;

/**
 * A fence was asked to lower its {@code min_token}: the token counter in Redis is behind the fences, which happens
 * only when Redis lost its data. Nothing was changed; tokens only rise (ADR 8).
 */
public final class TokenBehindException extends RuntimeException {
    public TokenBehindException(String store, String scope, long token, long minToken) {
        super("the " + store + " fence of '" + scope + "' demands min_token " + minToken
                + " and this command's token is "
                + token + ": Redis' token counter is behind the fences (Redis lost its data?). Nothing was changed;"
                + " run `rebalance cutover --recover`, which seeds the counter from the fences");
    }
}
