package io.rebalance.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.ops.Connections;
import io.rebalance.ops.PartChoice;
import io.rebalance.ops.ShadowReport;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code rebalance shadow}: what the applications' shadow reads found (the outcomes of the last hour, the match rate,
 * the latest mismatches with both stores' answers), and with {@code --sample} the fraction of reads compared.
 */
@Command(
        name = "shadow",
        description = "Show what applications reading through Router found when they read a sample of rows from both"
                + " stores: outcomes of the last hour, the match rate, the latest mismatches with both answers; with"
                + " --sample, set the fraction of reads compared (applications pick it up with their next read).",
        footerHeading = "%nExamples:%n",
        footer = {
            "  rebalance shadow -c migration.yaml --sample 0.01   # compare one read in a hundred",
            "  rebalance shadow -c migration.yaml                 # what they found",
            "  rebalance shadow -c migration.yaml --part eu --limit 5 --json"
        })
final class ShadowCommand implements Callable<Integer> {
    @Mixin
    ConfigOptions options;

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Option(
            names = "--sample",
            paramLabel = "FRACTION",
            description = "Compare this fraction of the reads through Router, 0 to 1 (0 stops comparing); on a table"
                    + " moved part by part, on --part's part, or on every part without it.")
    Double sample;

    @Option(
            names = "--part",
            paramLabel = "PART",
            description = "One part of a table moved part by part (cutover.parts); every part without it.")
    String part;

    @Option(
            names = "--limit",
            paramLabel = "N",
            defaultValue = "10",
            description = "How many of the latest mismatches to print (default ${DEFAULT-VALUE}; Redis keeps 1,000).")
    int limit;

    @Option(
            names = "--json",
            description = "Print JSON: {\"scopes\": [{\"scope\", \"sample\", \"lastHour\": {\"match\", \"mismatch\","
                    + " \"error\", \"skipped\"}, \"matchRate\", \"total\": {...}, \"mismatches\": [{\"key\", \"at\","
                    + " \"postgres\", \"dynamodb\"}]}]}.")
    boolean json;

    @Override
    public Integer call() throws Exception {
        if (limit < 0) {
            throw new RebalanceException(
                    ErrorCode.CONFIG_INVALID,
                    "--limit " + limit + " is negative; give how many mismatches to print (0 for none)");
        }
        MigrationConfig config = options.load();
        RedisOnly.require(config, "shadow", "the routing table and the shadow reads' counts");
        PrintWriter out = spec.commandLine().getOut();
        try (Connections c = new Connections(config, 2)) {
            PartChoice choice = PartChoice.of(config, part, false, c::routeStatus);
            List<String> scopes = choice.part() != null || !choice.parted()
                    ? List.of(choice.scope())
                    : choice.parts().scopes(choice.base());
            ShadowReport report = c.shadowReport();
            if (sample != null) report.setSample(scopes, sample);
            List<Map<String, Object>> found = new ArrayList<>();
            for (String scope : scopes) found.add(report.scope(scope, limit));
            if (json) {
                Map<String, Object> v = new LinkedHashMap<>();
                v.put("scopes", found);
                out.println(new ObjectMapper().writeValueAsString(v));
                return 0;
            }
            for (Map<String, Object> s : found) print(s, out);
            return 0;
        }
    }

    @SuppressWarnings("unchecked")
    private void print(Map<String, Object> s, PrintWriter out) {
        out.println(s.get("scope") + ": " + RoutingLines.shadowSummary(s, sample == null ? "" : " (set now)"));
        for (Map<String, Object> m : (List<Map<String, Object>>) s.get("mismatches")) {
            out.printf(
                    "  %s at %s%n    postgres %s%n    dynamodb %s%n",
                    m.get("key"), m.get("at"), m.get("postgres"), m.get("dynamodb"));
        }
    }
}
