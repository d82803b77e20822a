-- The Postgres fence, enforced by the moved table itself (FenceTrigger): a statement trigger that refuses every
-- INSERT, UPDATE, DELETE, COPY, MERGE and TRUNCATE while the fence admits no application, except the reverse
-- stream's. It is enabled only while the fence is closed (the flip enables it under the table's lock); it reads the
-- fence again all the same, under its advisory lock as a guarded write does, so a trigger left enabled over an open
-- fence admits rather than refuses.
-- ${function}, ${fence}: the function's and the fence table's qualified names. TG_ARGV: the scope, the lock's key.
CREATE OR REPLACE FUNCTION ${function}() RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER -- a writer needs no privilege on the fence table: the check reads it as the fence's owner
SET search_path = pg_catalog, pg_temp
AS $fence$
DECLARE
    w text;
    r text;
BEGIN
    PERFORM pg_advisory_xact_lock_shared(hashtextextended(TG_ARGV[1], 0));
    IF current_setting('transaction_isolation') = 'read committed' THEN
        -- a statement of its own, so a snapshot taken after the lock was granted
        SELECT writer, route INTO w, r FROM ${fence} WHERE scope = TG_ARGV[0];
    ELSE
        -- the transaction's snapshot may predate the lock; a row lock fails with a serialization error when a
        -- cutover changed the row since (multixacts, but only for writers at REPEATABLE READ or SERIALIZABLE)
        SELECT writer, route INTO w, r FROM ${fence} WHERE scope = TG_ARGV[0] FOR SHARE;
    END IF;
    IF w IS NULL OR w = 'app' THEN
        RETURN NULL;
    END IF;
    IF w = 'reverse' AND current_setting('rebalance.writer', true) = 'reverse' THEN
        RETURN NULL; -- the reverse stream, under the fence's lock (PostgresFence#lockForReverse)
    END IF;
    RAISE EXCEPTION USING
        ERRCODE = 'RB001',
        MESSAGE = format('rebalance: %s on %s refused: the Postgres fence of scope ''%s'' admits no application'
            ' (writer=%s, route %s), so this write would be lost; nothing was written', TG_OP, TG_TABLE_NAME,
            TG_ARGV[0], w, r),
        HINT = CASE
            WHEN r = 'SOURCE' THEN 'a cutover is blocking writes for a moment: retry the write'
            WHEN r = 'TARGET' THEN 'DynamoDB is the store of record: write through the application''s WriteGuard,'
                ' or roll back with `rebalance cutover --rollback`'
            ELSE 'the table was retired (route FINAL): DynamoDB is the store of record; write there'
        END;
END
$fence$;
REVOKE ALL ON FUNCTION ${function}() FROM PUBLIC;
