package io.rebalance.core.slot;

import java.util.ArrayList;
import java.util.List;

/**
 * Slots as ranges of the primary key, for a table whose rows tell no time ({@code slots.timeFrom: none}): the key's
 * own order (its type's, and for text its column's collation, the order its index keeps) cut at {@code splits}, so
 * range {@code i} holds the keys from split {@code i-1} (inclusive) up to split {@code i} (exclusive). The first range
 * has no lower end and the last no upper end: every key there is or will be has exactly one range. A composite key
 * is cut as a whole, first column then the rest, as its index orders it.
 *
 * @param key the primary key
 * @param splits the key texts where one range ends and the next begins, ascending; a plan of n ranges has n-1
 * @param rowsPerSlot the rows each range was planned to hold
 * @param store where the run's ranges are kept, or null where none is
 * @param stored whether these are the ranges the store keeps (else a plan not yet stored, as {@code check} shows it)
 */
public record KeyRanges(TableKey key, List<String> splits, long rowsPerSlot, KeyRangeStore store, boolean stored)
        implements SlotKeyspace {
    public KeyRanges {
        splits = List.copyOf(splits);
        if (splits.size() + 1 > Slot.MAX_RANGES)
            throw new IllegalArgumentException("a plan has at most " + Slot.MAX_RANGES + " key ranges");
    }

    /** A plan kept nowhere yet. */
    public KeyRanges(TableKey key, List<String> splits, long rowsPerSlot) {
        this(key, splits, rowsPerSlot, null, false);
    }

    /** These ranges as kept by {@code store}. */
    public KeyRanges storedIn(KeyRangeStore store) {
        return new KeyRanges(key, splits, rowsPerSlot, store, true);
    }

    /**
     * SQL giving the range of the row aliased {@code q} ({@code src.}), as a number: Postgres compares the key with
     * the stored ranges in its own order.
     *
     * @throws IllegalStateException before the ranges are stored: no process planned the run yet
     */
    public String slotSql(String q) {
        if (!stored) throw new IllegalStateException("the key ranges are not stored yet: `rebalance copy` plans them");
        return store.slotSql(q);
    }

    /** How many ranges the plan has. */
    public int count() {
        return splits.size() + 1;
    }

    /** The run's slots: the last range is copied first. */
    public SlotRange range() {
        return new SlotRange(Slot.range(count() - 1), Slot.range(0));
    }

    @Override
    public String predicate(Slot slot) {
        boolean first = slot.index() == 0;
        boolean last = slot.index() == count() - 1;
        String operand = key.operand("", false);
        String lower = operand + " >= " + key.placeholder();
        String upper = operand + " < " + key.placeholder();
        if (first && last) return "true";
        if (first) return upper;
        if (last) return lower;
        return lower + " AND " + upper;
    }

    /** A range in the middle of the plan: {@link #predicate(Slot)} is this where the range has both ends. */
    @Override
    public String predicate() {
        return key.operand("", false) + " >= " + key.placeholder() + " AND " + key.operand("", false) + " < "
                + key.placeholder();
    }

    /** The JDBC values of the range's ends, each key's parts in turn: none for an open end. */
    @Override
    public Object[] bounds(Slot slot) {
        requireRange(slot);
        int i = (int) slot.index();
        List<Object> out = new ArrayList<>(4);
        if (i > 0) addParts(out, splits.get(i - 1));
        if (i < count() - 1) addParts(out, splits.get(i));
        return out.toArray();
    }

    private void addParts(List<Object> out, String keyText) {
        List<String> parts = key.parts(keyText);
        for (int p = 0; p < parts.size(); p++) out.add(key.types().get(p).bind(parts.get(p)));
    }

    /** The lowest and highest key text of the range, null for an open end. */
    public String[] ends(Slot slot) {
        requireRange(slot);
        int i = (int) slot.index();
        return new String[] {i > 0 ? splits.get(i - 1) : null, i < count() - 1 ? splits.get(i) : null};
    }

    private void requireRange(Slot slot) {
        if (!slot.keyRange() || slot.index() >= count())
            throw new IllegalArgumentException("slot " + slot + " is not one of the plan's " + count()
                    + " key ranges (r000000.." + Slot.range(count() - 1) + ")");
    }

    /**
     * Whether Postgres' {@code width_bucket} can find a key's range among the cuts: a single uuid or integer key,
     * whose order is its type's. Not text (its order is its column's collation), nor a composite key.
     */
    public boolean bucketable() {
        return !key.composite() && key.types().get(0) != KeyType.TEXT;
    }

    @Override
    public Object[] hourBounds(Slot slot) {
        return bounds(slot);
    }

    @Override
    public String boundType() {
        return key.types().get(0).sqlArrayType().replace("[]", "");
    }

    @Override
    public String column() {
        return key.operand("", false);
    }

    /** The range's number, found by Postgres in the stored ranges. */
    @Override
    public String rowSlotSql(String qualifier) {
        return "(" + slotSql(qualifier) + ")::text";
    }

    @Override
    public Slot rowSlot(String text) {
        return Slot.range(Long.parseLong(text));
    }

    @Override
    public boolean keyNamesSlot() {
        return false;
    }

    @Override
    public int keyParts() {
        return key.columns().size();
    }
}
