package io.rebalance.cli;

import io.rebalance.cutover.CutoverStep;
import java.util.Arrays;

/**
 * A {@code rebalance} process that dies before one step of a cutover, as under kill -9 ({@code Runtime.halt}: no
 * cleanup, no lease release). Test support: {@code java -cp rebalance.jar:test-classes io.rebalance.cli.KilledCutover
 * OPEN_TARGET cutover --config ...}.
 */
public final class KilledCutover {
    private KilledCutover() {}

    public static void main(String[] args) {
        CutoverStep at = CutoverStep.valueOf(args[0]);
        int code = RebalanceCommand.execute(Arrays.copyOfRange(args, 1, args.length), System.out, System.err, step -> {
            if (step == at) Runtime.getRuntime().halt(137);
        });
        System.exit(code);
    }
}
