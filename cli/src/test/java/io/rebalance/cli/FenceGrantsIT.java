package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code cutover --prepare} grants the application roles ({@code cutover.applicationRoles}) SELECT on the Postgres
 * fence, the one right a guarded write needs, and refuses, installing nothing, while any of them could change the
 * fence and so reopen it under a cutover; the cutover's pre-checks say the same.
 */
class FenceGrantsIT {
    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("grants");
    private final String prefix = SharedServices.unique("fg") + ":";
    private final String fence = "public." + table + "_fence";
    private final String role = SharedServices.unique("app_rw");

    private List<String> flags(String roles) {
        List<String> flags = new ArrayList<>(CliRun.base(services, table, prefix));
        flags.addAll(List.of(
                "--set", "tail.slotName=" + table,
                "--set", "tail.publication=" + table,
                "--set", "cutover.pgFence=" + fence,
                "--set", "cutover.dynamoFence=" + table + "_fence",
                "--set", "cutover.applicationRoles=" + roles));
        return flags;
    }

    @Test
    void prepareGrantsTheApplicationRolesReadingAndRefusesRolesThatCouldReopenTheFence() throws Exception {
        try (Connection pg = services.postgres();
                Statement st = pg.createStatement()) {
            RoomEventsGenerator.create(pg, table, 200, Instant.parse("2024-10-20T04:00:00Z"), 2, 3);
            st.execute("CREATE ROLE " + role);
            try {
                CliRun copy =
                        CliRun.of(flags(""), "copy", "--no-concurrent-writers", "--no-progress", "--create-table");
                assertThat(copy.exitCode()).as(copy.err()).isZero();

                CliRun unknown = CliRun.of(flags(role + ",no_such_role_fg"), "cutover", "--prepare");
                assertThat(unknown.exitCode()).as(unknown.out() + unknown.err()).isEqualTo(31);
                assertThat(unknown.err())
                        .contains("cutover.applicationRoles: no_such_role_fg no such role")
                        .contains("Nothing was changed");
                assertThat(query(st, "SELECT to_regclass('" + fence + "') IS NULL"))
                        .as("the fence of a refused --prepare is not installed")
                        .isEqualTo("t");

                CliRun prepared = CliRun.of(flags(role), "cutover", "--prepare");
                assertThat(prepared.exitCode()).as(prepared.err()).isZero();
                assertThat(prepared.out())
                        .contains("application roles " + role + " may read " + fence
                                + " (to check it) and not change it");
                assertThat(query(st, "SELECT has_table_privilege('" + role + "', '" + fence + "', 'SELECT')"))
                        .isEqualTo("t");

                st.execute("GRANT UPDATE ON " + fence + " TO " + role);
                CliRun refused = CliRun.of(flags(role), "cutover", "--prepare");
                assertThat(refused.exitCode()).isEqualTo(31);
                assertThat(refused.err())
                        .contains("cutover.applicationRoles: " + role + " may change " + fence)
                        .contains("REVOKE INSERT, UPDATE, DELETE, TRUNCATE, TRIGGER ON " + fence + " FROM " + role);
                CliRun dry = CliRun.of(flags(role), "cutover", "--dry-run");
                assertThat(dry.out())
                        .contains("FAILED fence grants: cutover.applicationRoles: " + role + " may change");

                CliRun unchecked = CliRun.of(flags(""), "cutover", "--prepare");
                assertThat(unchecked.exitCode()).as(unchecked.err()).isZero();
                assertThat(unchecked.out()).contains("application roles not checked: set cutover.applicationRoles");
            } finally {
                st.execute("DROP OWNED BY " + role);
                st.execute("DROP ROLE " + role);
                CutoverTables.drop(services, table);
            }
        }
    }

    private static String query(Statement st, String sql) throws Exception {
        try (ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }
}
