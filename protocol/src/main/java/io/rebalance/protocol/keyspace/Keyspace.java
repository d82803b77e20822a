package io.rebalance.protocol.keyspace;

import java.util.Optional;

/**
 * Every Redis key of a run, built here and nowhere else from the configured prefix ({@code redis.prefix}): one view
 * per part, each declaring its hash tag (so every script's keys share a Redis Cluster slot) and its reset group (what
 * {@code rebalance reset --forget} deletes). Every key starts with the prefix, so one SCAN finds a run's keys.
 *
 * <p>Not to be confused with a table's {@code SlotKeyspace}, which maps row ids to hourly slots.
 */
public final class Keyspace {
    private final String prefix;

    public Keyspace(String prefix) {
        if (prefix == null || prefix.indexOf('{') >= 0 || prefix.indexOf('}') >= 0) {
            // a brace would become every key's hash tag and put the whole run on one cluster node
            throw new IllegalArgumentException("redis.prefix '" + prefix + "' is not usable: give one without braces");
        }
        this.prefix = prefix;
    }

    /** The prefix every key of the run starts with: for scans and for messages to people. */
    public String prefix() {
        return prefix;
    }

    /** The copy's plan, status, progress, processes, rate limit and slot leases and states. */
    public RunKeys run() {
        return new RunKeys(prefix);
    }

    /** The change stream's offsets, lease, status, repair queue and touched keys. */
    public TailKeys tail() {
        return new TailKeys(prefix);
    }

    /** What the cutover and the tail hand over: the forward hold, the key log, the reverse stream's state. */
    public HandoffKeys handoff() {
        return new HandoffKeys(prefix);
    }

    /** One scope's (the moved table's) readers-writers lock, routing entry, cutover journal and target-write log. */
    public ScopeKeys scope(String scope) {
        return new ScopeKeys(prefix, scope);
    }

    /** Set: every scope that has a routing entry, for {@code rebalance status}. */
    public String routes() {
        return prefix + "routes";
    }

    /** Hash: slot to the JSON of its latest verification. In the copy's reset group: a new copy voids them. */
    public String verified() {
        return prefix + "verified";
    }

    /** Hash: row id to why DynamoDB refused the row. In the copy's reset group. */
    public String refused() {
        return prefix + "refused";
    }

    /**
     * The counter of fencing tokens beside a lease key, in the lease's cluster slot so one script touches both: the
     * name plus {@code :token} when the name has a hash tag; otherwise the name is also the tag
     * ({@code mgre:keeper:token{mgre:keeper}}), since a key without a tag hashes as a whole.
     */
    public static String leaseToken(String leaseKey) {
        if (leaseKey.indexOf('{') >= 0) return leaseKey + ":token"; // the tag comes first, so the counter shares it
        return leaseKey + ":token{" + leaseKey + "}";
    }

    /**
     * The part a key of this run belongs to, or empty for a key under the prefix that is none of this run's (a
     * longer prefix's run, say {@code mgre:} and {@code mgre:b:}).
     */
    public Optional<ResetGroup> groupOf(String key) {
        if (!key.startsWith(prefix)) return Optional.empty();
        String name = key.substring(prefix.length());
        Optional<ResetGroup> group = groupOfName(name);
        return group.isPresent() ? group : groupOfName(withoutLeaseToken(name));
    }

    private static Optional<ResetGroup> groupOfName(String name) {
        if (name.equals("routes") || ScopeKeys.owns(name)) return Optional.of(ResetGroup.ROUTE);
        if (TailKeys.owns(name)) return Optional.of(ResetGroup.TAIL);
        if (name.equals("verified") || name.equals("refused") || RunKeys.owns(name)) {
            return Optional.of(ResetGroup.COPY);
        }
        return Optional.empty();
    }

    private static String withoutLeaseToken(String name) {
        if (name.endsWith(":token") && name.indexOf('{') == 0) return name.substring(0, name.length() - 6);
        int tagged = name.indexOf(":token{");
        if (tagged > 0 && name.endsWith("}")) return name.substring(0, tagged);
        return name;
    }

    /** The part of a key after its hash tag ({@code {tag}:rest} to {@code rest}), or null when it has none. */
    static String afterTag(String name, String tag) {
        String head = "{" + tag + "}:";
        return name.startsWith(head) ? name.substring(head.length()) : null;
    }

    /** The part of a key after any leading hash tag, or null when it does not start with one. */
    static String afterAnyTag(String name) {
        if (!name.startsWith("{")) return null;
        int end = name.indexOf("}:");
        return end < 2 ? null : name.substring(end + 2);
    }

    @Override
    public String toString() {
        return "Keyspace[" + prefix + "]";
    }
}
