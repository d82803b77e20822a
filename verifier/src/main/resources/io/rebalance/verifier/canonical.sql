-- The SQL half of the canonical encoding (docs/fingerprint.md); CanonicalItem is the Java half.
-- Temporary functions: they live in this session's pg_temp schema, need no privilege beyond TEMP, and leave
-- nothing behind in the source database. Values reach them under SourceSession's pinned settings (TimeZone UTC).
-- The SQL functions are STABLE, not IMMUTABLE: `text || int` is STABLE, and Postgres inlines a SQL function only
-- when its body is no more volatile than declared; inlined, they cost what the expressions cost (3x faster here).
CREATE OR REPLACE FUNCTION pg_temp.rb_text(tag text, t text) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE AS $$ SELECT tag || octet_length(t) || ':' || t $$;

-- ISO-8601 year as the codec writes it: 44 BC is -0043, 1 BC is 0000.
CREATE OR REPLACE FUNCTION pg_temp.rb_year(y int) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN y >= 1000 THEN y::text WHEN y > 0 THEN lpad(y::text, 4, '0')
                WHEN y = -1 THEN '0000' ELSE '-' || lpad((-y - 1)::text, 4, '0') END $$;

CREATE OR REPLACE FUNCTION pg_temp.rb_tstz(v timestamptz) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN NOT isfinite(v) THEN v::text
                ELSE pg_temp.rb_year(extract(year FROM v)::int) || to_char(v, '-MM-DD"T"HH24:MI:SS.US"Z"') END $$;

CREATE OR REPLACE FUNCTION pg_temp.rb_ts(v timestamp) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN NOT isfinite(v) THEN v::text
                ELSE pg_temp.rb_year(extract(year FROM v)::int) || to_char(v, '-MM-DD"T"HH24:MI:SS.US') END $$;

CREATE OR REPLACE FUNCTION pg_temp.rb_date(v date) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN NOT isfinite(v) THEN v::text
                ELSE pg_temp.rb_year(extract(year FROM v)::int) || to_char(v, '-MM-DD') END $$;

-- A number as DynamoDB gives it back: N with no trailing fractional zeros; NaN and infinities as S.
CREATE OR REPLACE FUNCTION pg_temp.rb_num(t text) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN t IN ('NaN', 'Infinity', '-Infinity') THEN pg_temp.rb_text('S', t)
                ELSE pg_temp.rb_text('N', trim_scale(t::numeric)::text) END $$;

-- json by value: keys sorted by code point, numbers normalized, every part typed and length-prefixed.
-- rb_jv handles a scalar inline and recurses only into objects and arrays. The recursion is plpgsql: the same in
-- plain SQL measured 14x slower (Postgres re-plans the mutually recursive functions on every call).
CREATE OR REPLACE FUNCTION pg_temp.rb_json(j jsonb) RETURNS text
    LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
DECLARE
    r text;
BEGIN
    CASE jsonb_typeof(j)
        WHEN 'object' THEN
            SELECT 'o' || count(*) || ':'
                       || coalesce(string_agg(octet_length(key) || ':' || key || pg_temp.rb_jv(value), ''
                                              ORDER BY key COLLATE "C"), '')
              INTO r FROM jsonb_each(j);
        WHEN 'array' THEN
            SELECT 'a' || count(*) || ':' || coalesce(string_agg(pg_temp.rb_jv(e), '' ORDER BY n), '')
              INTO r FROM jsonb_array_elements(j) WITH ORDINALITY AS a(e, n);
        ELSE
            r := pg_temp.rb_jv(j);
    END CASE;
    RETURN r;
END $$;

CREATE OR REPLACE FUNCTION pg_temp.rb_jv(j jsonb) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT CASE jsonb_typeof(j)
               WHEN 'string' THEN pg_temp.rb_text('s', j #>> '{}')
               WHEN 'number' THEN pg_temp.rb_text('n', trim_scale((j #>> '{}')::numeric)::text)
               WHEN 'boolean' THEN CASE WHEN j = 'true'::jsonb THEN 't' ELSE 'f' END
               WHEN 'null' THEN 'z'
               ELSE pg_temp.rb_json(j) END $$;
