-- The Postgres fence of a table moved part by part (PartFenceTrigger): a row trigger that refuses an INSERT, UPDATE,
-- DELETE, COPY or MERGE of a row whose part's fence admits no application, except the reverse stream's, and a
-- statement trigger that refuses a TRUNCATE while any part's fence does. Enabled while any part's fence is closed;
-- each row's part is read again under that part's advisory lock, as a guarded write does, so a write to a part on
-- SOURCE goes through and a trigger left enabled over open fences admits rather than refuses.
-- ${check}: the check of one part's fence, shared by every parted table of this fence table.
-- ${function}: this table's trigger function; ${part_old}, ${part_new}: the part's name of OLD and of NEW, by the
-- table's parts (PartMap.sqlPart). TG_ARGV: the table's scope, the lock key's prefix, the parts' names.
CREATE OR REPLACE FUNCTION ${check}(part_scope text, lock_key text, op text, tbl text) RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER -- a writer needs no privilege on the fence table: the check reads it as the fence's owner
SET search_path = pg_catalog, pg_temp
AS $check$
DECLARE
    w text;
    r text;
BEGIN
    PERFORM pg_advisory_xact_lock_shared(hashtextextended(lock_key, 0));
    IF current_setting('transaction_isolation') = 'read committed' THEN
        SELECT f.writer, f.route INTO w, r FROM ${fence} f WHERE f.scope = part_scope;
    ELSE
        SELECT f.writer, f.route INTO w, r FROM ${fence} f WHERE f.scope = part_scope FOR SHARE;
    END IF;
    IF w IS NULL OR w = 'app' THEN
        RETURN;
    END IF;
    IF w = 'reverse' AND current_setting('rebalance.writer', true) = 'reverse' THEN
        RETURN; -- the reverse stream, under the fence's lock (PostgresFence#lockForReverse)
    END IF;
    RAISE EXCEPTION USING
        ERRCODE = 'RB001',
        MESSAGE = format('rebalance: %s on %s refused: the Postgres fence of scope ''%s'' admits no application'
            ' (writer=%s, route %s), so this write would be lost; nothing was written', op, tbl, part_scope, w, r),
        HINT = CASE
            WHEN r = 'SOURCE' THEN 'a cutover of this part is blocking writes for a moment: retry the write'
            WHEN r = 'TARGET' THEN 'DynamoDB is this part''s store of record: write through the application''s'
                ' WriteGuard, or roll the part back with `rebalance cutover --rollback --part`'
            ELSE 'the part was retired (route FINAL): DynamoDB is its store of record; write there'
        END;
END
$check$;
REVOKE ALL ON FUNCTION ${check}(text, text, text, text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION ${function}() RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fence$
DECLARE
    o text;
    n text;
    p text;
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        FOREACH p IN ARRAY TG_ARGV[2]::text[] LOOP
            PERFORM ${check}(TG_ARGV[0] || '/' || p, TG_ARGV[1] || TG_ARGV[0] || '/' || p, TG_OP, TG_TABLE_NAME);
        END LOOP;
        RETURN NULL;
    END IF;
    IF TG_OP <> 'INSERT' THEN
        o := ${part_old};
        PERFORM ${check}(TG_ARGV[0] || '/' || o, TG_ARGV[1] || TG_ARGV[0] || '/' || o, TG_OP, TG_TABLE_NAME);
    END IF;
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    n := ${part_new};
    IF o IS DISTINCT FROM n THEN -- an update moving a row to another part needs both parts open
        PERFORM ${check}(TG_ARGV[0] || '/' || n, TG_ARGV[1] || TG_ARGV[0] || '/' || n, TG_OP, TG_TABLE_NAME);
    END IF;
    RETURN NEW;
END
$fence$;
REVOKE ALL ON FUNCTION ${function}() FROM PUBLIC;
