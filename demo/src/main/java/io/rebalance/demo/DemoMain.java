package io.rebalance.demo;

import io.rebalance.cli.RebalanceCommand;
import io.rebalance.cutover.CutoverHooks;
import java.util.List;

/**
 * The main of rebalance-demo.jar: every {@code rebalance} command, plus {@code demo} and {@code dynamodb-local},
 * which need DynamoDB Local and so are left out of the production jar.
 */
public final class DemoMain {
    private DemoMain() {}

    public static void main(String[] args) {
        int code = RebalanceCommand.execute(
                args,
                System.out,
                System.err,
                CutoverHooks.NONE,
                List.of(DemoCommand.class, DynamoDbLocalCommand.class));
        // DynamoDB Local leaves non-daemon threads behind after it stops: exit explicitly (STACK.md).
        System.exit(code);
    }
}
