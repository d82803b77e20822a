package io.rebalance.cli;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;

/**
 * The main classes of every module this one sees (all but demo and bench), imported once for the tests that read the
 * bytecode ({@link ArchitectureTest}, {@link IamPolicyTest}): an import takes seconds.
 */
final class MainClasses {
    static final JavaClasses ALL = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .withImportOption(location -> !location.contains("/io/rebalance/testkit/")) // the tests' kit, never shipped
            .importPackages("io.rebalance");

    private MainClasses() {}
}
