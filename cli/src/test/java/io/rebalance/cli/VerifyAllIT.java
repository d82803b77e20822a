package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code verify --all} means every slot that holds rows, not only the copy's plan: a row inserted into an hour newer
 * than the plan (the live hours, where the application writes) is proven too. Here it never reached DynamoDB, so
 * verify must find it missing; verifying only the plan would have said MATCH.
 */
class VerifyAllIT {
    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("vall");
    private final String prefix = SharedServices.unique("va") + ":";

    private CliRun run(String... words) {
        List<String> args = new ArrayList<>(List.of(words));
        args.addAll(CliRun.base(services, table, prefix));
        args.addAll(List.of("--set", "verify.settle=200ms"));
        return CliRun.of(args.toArray(String[]::new));
    }

    @Test
    void aRowInAnHourNewerThanThePlanIsProvenToo() throws Exception {
        try (Connection pg = services.postgres()) {
            RoomEventsGenerator.create(pg, table, 300, Instant.parse("2024-10-20T04:00:00Z"), 3, 5);
        }
        assertThat(run("copy", "--create-table", "--no-concurrent-writers").exitCode())
                .isZero();
        assertThat(run("verify", "--all").exitCode()).isZero();

        String late = "01JAM9WKJ00000000000000ZZZ"; // a ULID of 2024-10-20T06:30, hours after the plan's newest
        try (Connection pg = services.postgres();
                Statement st = pg.createStatement()) {
            st.execute("INSERT INTO " + table + " VALUES ('" + late + "', gen_random_uuid(), 'message', NULL,"
                    + " '2024-10-20T06:30:00Z', 1)");
        }
        CliRun all = run("verify", "--all");
        assertThat(all.exitCode()).as(all.out() + all.err()).isEqualTo(1);
        assertThat(all.out()).contains(late + "  MISSING in DynamoDB");
    }
}
