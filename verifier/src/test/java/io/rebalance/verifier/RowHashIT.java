package io.rebalance.verifier;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.dynamo.SlotIndex;
import io.rebalance.core.retry.Retrier;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.source.SourceTable;
import io.rebalance.testkit.TypeZoo;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Both row hashes are computed alike by Postgres and by Java, over texts of every length of a hashing round and
 * beyond, multi-byte characters included, and over every type-zoo row copied to DynamoDB; the source is asked which
 * to use, and one whose text hash is missing or differs gets MD5.
 */
class RowHashIT {
    /** Texts of every length from 0 to 40 and random ones up to 300 characters, from ASCII to 4-byte characters. */
    static List<String> texts() {
        String alphabet = "abcXYZ0189:|'\"\\ ✓é☃𝄞中\u0000\u007f";
        List<String> out = new ArrayList<>();
        Random random = new Random(7);
        for (int len = 0; len <= 40; len++) out.add(randomText(random, alphabet, len));
        for (int i = 0; i < 200; i++) out.add(randomText(random, alphabet, random.nextInt(300)));
        return out;
    }

    private static String randomText(Random random, String alphabet, int codePoints) {
        int[] cps = alphabet.codePoints().filter(cp -> cp != 0).toArray(); // Postgres text holds no NUL
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < codePoints; i++) b.appendCodePoint(cps[random.nextInt(cps.length)]);
        return b.toString();
    }

    @ParameterizedTest
    @EnumSource(RowHash.class)
    void postgresAndJavaHashEveryTextAlike(RowHash hash) throws Exception {
        try (VerifierFixture f = new VerifierFixture();
                Connection c = f.session();
                PreparedStatement ps = c.prepareStatement("SELECT " + hash.sql("CAST(? AS text)"))) {
            List<String> mismatches = new ArrayList<>();
            for (String text : texts()) {
                ps.setString(1, text);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    if (rs.getLong(1) != hash.of(text))
                        mismatches.add(text + ": " + rs.getLong(1) + "/" + hash.of(text));
                }
            }
            assertThat(mismatches).isEmpty();
        }
    }

    @Test
    void thisSourceIsHashedWithItsTextHash() throws Exception {
        try (VerifierFixture f = new VerifierFixture();
                Connection c = f.session()) {
            assertThat(RowHash.probe(c)).isEqualTo(RowHash.TEXT_HASH);
        }
    }

    @Test
    void aSourceWithoutTheTextHashOrWithAnotherOneIsHashedWithMd5() throws Exception {
        try (VerifierFixture f = new VerifierFixture();
                Connection c = f.session();
                Statement st = c.createStatement()) {
            // Postgres 10 has no hashtextextended: the server's own "no such function" error
            assertThat(RowHash.probe(c, "rebalance_no_such_hash")).isEqualTo(RowHash.MD5);
            // a big-endian server computes another value for the same bytes: a function that agrees only on ""
            String other = f.table + "_other_hash";
            st.execute("CREATE FUNCTION " + other + "(t text, seed bigint) RETURNS bigint LANGUAGE sql AS"
                    + " $$ SELECT CASE WHEN t = '' THEN hashtextextended(t, seed) ELSE 1 END $$");
            try {
                assertThat(RowHash.probe(c, other)).isEqualTo(RowHash.MD5);
                assertThat(RowHash.probe(c, "hashtextextended")).isEqualTo(RowHash.TEXT_HASH);
            } finally {
                st.execute("DROP FUNCTION " + other + "(text, bigint)");
            }
        }
    }

    @ParameterizedTest
    @EnumSource(RowHash.class)
    void everyTypeZooRowFingerprintsAlikeOnBothSides(RowHash hash) throws Exception {
        try (VerifierFixture f = new VerifierFixture()) {
            try (Connection c = f.services.postgres()) {
                TypeZoo.create(c, f.table, 2);
            }
            f.copy(CanonicalEncodingIT.SLOTS);
            SourceTable table = f.sourceTable();
            var target = f.config().target();
            CanonicalItem canonical =
                    new CanonicalItem(table.columns(), table.key(), target.slotAttribute(), target.forms());
            SourceFingerprints source = new SourceFingerprints(table, new CanonicalSql(target.forms()), hash);
            SlotItems items = new SlotItems(
                    f.dynamo, f.table, SlotIndex.of(target), table.key(), canonical, hash, Retrier.standard());
            long rows = 0;
            try (Connection c = f.session()) {
                for (Slot slot : CanonicalEncodingIT.SLOTS) {
                    Fingerprint sql = source.slot(c, slot);
                    assertThat(items.read(slot).fingerprint())
                            .as(slot + " " + hash)
                            .isEqualTo(sql);
                    rows += sql.count();
                }
            }
            assertThat(rows).isEqualTo(2L * TypeZoo.rowsPerCopy());
        }
    }
}
