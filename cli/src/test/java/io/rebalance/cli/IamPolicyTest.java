package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.tngtech.archunit.core.domain.JavaCall;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The IAM policies of docs/deploy.md grant exactly the DynamoDB and DynamoDB Streams actions the code calls: every
 * call of the SDK's clients in the main classes (read from the bytecode), mapped to the action IAM authorizes it by,
 * against the actions the policy lists. One policy for the rebalance pods (every part but {@code client}), one for
 * the applications that embed {@code client} (with {@code protocol} under it). A call added without its action, or an
 * action left in the policy that nothing calls, fails here.
 */
class IamPolicyTest {
    private static final JavaClasses MAIN = MainClasses.ALL;
    private static final String DYNAMODB = "software.amazon.awssdk.services.dynamodb.";
    /** The SDK's calls that are not a request to AWS. */
    private static final Set<String> NOT_REQUESTS =
            Set.of("builder", "close", "serviceClientConfiguration", "serviceName", "waiter", "create");
    /** A waiter's wait is a loop of this call. */
    private static final Map<String, String> WAITS = Map.of("waitUntilTableExists", "DescribeTable");
    /**
     * TransactWriteItems has no action of its own: IAM authorizes each item by its kind. The kinds are read from the
     * code's calls of {@code TransactWriteItem.Builder}.
     */
    private static final Map<String, String> TRANSACT_ITEMS = Map.of(
            "put", "PutItem", "update", "UpdateItem", "delete", "DeleteItem", "conditionCheck", "ConditionCheckItem");

    /** Packages that are no product: the test services, the simulator, the demo, the benchmarks. */
    private static final Set<String> NOT_PRODUCT = Set.of(
            "io.rebalance.local",
            "io.rebalance.sim",
            "io.rebalance.demo",
            "io.rebalance.testkit",
            "io.rebalance.bench");

    @Test
    void theRebalancePodsPolicyGrantsExactlyTheActionsTheirCodeCalls() throws Exception {
        Set<String> called = actions(c -> product(c) && !in(c, "io.rebalance.client"));
        assertThat(called).contains("dynamodb:BatchWriteItem", "dynamodb:GetRecords", "dynamodb:Query");
        assertThat(policy("rebalance-pods")).isEqualTo(called);
    }

    @Test
    void theApplicationsPolicyGrantsExactlyTheActionsTheGuardCalls() throws Exception {
        Set<String> called = reachedFromClient();
        assertThat(called).contains("dynamodb:ConditionCheckItem");
        assertThat(policy("applications")).isEqualTo(called);
    }

    /**
     * The actions the code an application runs calls: every method reached from {@code client}'s classes, through
     * {@code protocol} (a call of an interface's method reaches every implementation of it in the product).
     */
    private static Set<String> reachedFromClient() {
        Set<JavaCodeUnit> seen = new HashSet<>();
        Deque<JavaCodeUnit> todo = new ArrayDeque<>();
        for (JavaClass c : MAIN) if (in(c, "io.rebalance.client")) todo.addAll(c.getCodeUnits());
        Set<String> out = new TreeSet<>();
        while (!todo.isEmpty()) {
            JavaCodeUnit unit = todo.pop();
            if (!seen.add(unit)) continue;
            for (JavaCall<?> call : unit.getCallsFromSelf()) {
                action(call).ifPresent(out::add);
                if (!call.getTargetOwner().getName().startsWith("io.rebalance.")) continue;
                call.getTarget().resolveMember().ifPresent(todo::add);
                for (JavaClass impl : call.getTargetOwner().getAllSubclasses()) {
                    impl.getCodeUnits().stream()
                            .filter(u -> u.getName().equals(call.getName()))
                            .forEach(todo::add);
                }
            }
            // a lambda's body is a synthetic method of its class: reach them all
            unit.getOwner().getCodeUnits().stream()
                    .filter(u -> u.getName().startsWith("lambda$"))
                    .forEach(todo::add);
        }
        return out;
    }

    /** The IAM actions the classes that {@code scope} accepts call. */
    private static Set<String> actions(Predicate<JavaClass> scope) {
        Set<String> out = new TreeSet<>();
        for (JavaClass c : MAIN) {
            if (scope.test(c))
                c.getMethodCallsFromSelf().forEach(call -> action(call).ifPresent(out::add));
        }
        return out;
    }

    /** The IAM action a call asks for, if it is a request of the SDK's DynamoDB or Streams clients. */
    private static Optional<String> action(JavaCall<?> call) {
        String owner = call.getTargetOwner().getName();
        String name = call.getName();
        if (owner.equals(DYNAMODB + "DynamoDbClient") || owner.equals(DYNAMODB + "streams.DynamoDbStreamsClient")) {
            if (NOT_REQUESTS.contains(name) || name.equals("transactWriteItems")) return Optional.empty();
            String op = name.endsWith("Paginator") ? name.substring(0, name.length() - 9) : name;
            return Optional.of("dynamodb:" + Character.toUpperCase(op.charAt(0)) + op.substring(1));
        }
        if (owner.equals(DYNAMODB + "waiters.DynamoDbWaiter")) {
            assertThat(WAITS).as("a waiter the test maps to its call").containsKey(name);
            return Optional.of("dynamodb:" + WAITS.get(name));
        }
        if (owner.equals(DYNAMODB + "model.TransactWriteItem$Builder") && TRANSACT_ITEMS.containsKey(name))
            return Optional.of("dynamodb:" + TRANSACT_ITEMS.get(name));
        return Optional.empty();
    }

    private static boolean product(JavaClass c) {
        return NOT_PRODUCT.stream().noneMatch(p -> in(c, p));
    }

    private static boolean in(JavaClass c, String pkg) {
        return c.getPackageName().equals(pkg) || c.getPackageName().startsWith(pkg + ".");
    }

    /** The actions of the policy docs/deploy.md gives after the marker {@code <!-- iam:NAME -->}. */
    private static Set<String> policy(String name) throws Exception {
        String doc = Files.readString(
                Path.of(System.getProperty("user.dir")).resolveSibling("docs").resolve("deploy.md"));
        Matcher m = Pattern.compile("<!-- iam:" + name + " -->\\s*```json\\n(.*?)```", Pattern.DOTALL)
                .matcher(doc);
        assertThat(m.find()).as("docs/deploy.md has the policy " + name).isTrue();
        JsonNode policy = new ObjectMapper().readTree(m.group(1));
        Set<String> out = new TreeSet<>();
        for (JsonNode statement : policy.path("Statement")) {
            assertThat(statement.path("Effect").asText()).isEqualTo("Allow");
            for (JsonNode action : statement.path("Action")) out.add(action.asText());
        }
        return out;
    }
}
