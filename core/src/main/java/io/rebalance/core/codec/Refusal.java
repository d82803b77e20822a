package io.rebalance.core.codec;

/**
 * Why DynamoDB cannot hold a row as the codec maps it, and the way out a person can set without code (docs/codec.md).
 * {@link #code()} is the stable name {@code rebalance check --json} reports.
 */
public enum Refusal {
    NUMBER("number", "a number outside DynamoDB's range (1E-130 to 9.99E+125) or over 38 significant digits") {
        @Override
        public String wayOut(String column) {
            return "store it as its exact text: target.numbersAsString: [" + column + "]";
        }
    },
    JSON_NUMBER("json-number", "a json number outside DynamoDB's range or over 38 significant digits") {
        @Override
        public String wayOut(String column) {
            return "store the document as its text: target.jsonAsString: [" + column + "]";
        }
    },
    JSON_DEPTH("json-depth", "json nested deeper than DynamoDB's 32 levels") {
        @Override
        public String wayOut(String column) {
            return JSON_NUMBER.wayOut(column);
        }
    },
    ITEM_SIZE("item-size", "an item over DynamoDB's 400 KB") {
        @Override
        public String wayOut(String column) {
            return "leave its largest columns out with source.columns, or shrink those rows in Postgres";
        }
    };

    private final String code;
    private final String what;

    Refusal(String code, String what) {
        this.code = code;
        this.what = what;
    }

    public String code() {
        return code;
    }

    /** What the rows hold, in words. */
    public String what() {
        return what;
    }

    /** What to set or do so the rows are stored; {@code column} is the column at fault (null for the whole item). */
    public abstract String wayOut(String column);
}
